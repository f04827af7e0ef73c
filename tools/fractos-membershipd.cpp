// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fractos-membershipd: the fabric's node list from etcd.
 *
 *   fractos-membershipd -a ADDR[:PORT] [-e URL] [-p PREFIX] [-t TTL] [-v]
 *
 * Registers this node under PREFIX<node_id> (a JSON value: id, address,
 * port, epoch) with an etcd lease of TTL seconds, keeps the lease alive,
 * and watches PREFIX: every other node registered there is added to the
 * module (fractctl node add), re-added when its address or port changes,
 * and deleted when its key goes, which is when its lease expires (it died,
 * or lost etcd for TTL seconds) or it left; the module turns a deletion
 * into the revocation of that node's proxies, as for any dead node.  A
 * node that comes back registers again, with the new epoch of its new
 * module.  When this node's module is reloaded (a new epoch) the daemon
 * registers again and adds the others again.  SIGTERM deletes this node's
 * key (its lease is revoked) so that the others drop it at once.
 *
 * Only the nodes seen under PREFIX are managed: nodes configured by hand
 * are left alone.  Use "nodes managed" in fractos.conf(5) so that
 * fractctl config apply leaves the node list to this daemon.
 *
 * etcd is spoken through its v3 JSON gateway (the /v3/kv, /v3/lease and
 * /v3/watch endpoints every etcd 3.4+ serves next to gRPC) with libcurl
 * and nlohmann-json, both maintained Debian libraries: no gRPC stack, no
 * hand-rolled protocol.  Keys and values are base64 there (OpenSSL's
 * EVP_EncodeBlock).
 *
 * Exit status: 0 after SIGTERM/SIGINT, 1 on an error it cannot retry (a
 * bad option, no module at start), 2 on a usage error.
 */
#include "fractctl.hpp"

#include <caladan/sysfs.hpp>

#include <curl/curl.h>
#include <nlohmann/json.hpp>
#include <openssl/evp.h>

#include <arpa/inet.h>
#include <getopt.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdarg>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <thread>

using json = nlohmann::json;
using namespace fractctl;
using namespace std::chrono_literals;

namespace {

struct config {
	std::string endpoint = "http://127.0.0.1:2379";
	std::string prefix = "/fractos/nodes/";
	node_addr self_addr;
	std::string self_addr_text;
	unsigned ttl = 10;
};

std::atomic<bool> stopping{false};

void on_signal(int)
{
	stopping = true;
}

void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	std::fprintf(stdout, "fractos-membershipd: ");
	std::vfprintf(stdout, fmt, ap);
	std::fputc('\n', stdout);
	std::fflush(stdout);
	va_end(ap);
}

/* ---- base64 (etcd's JSON gateway carries bytes so) ---------------------- */

std::string b64(std::string_view s)
{
	std::string out(4 * ((s.size() + 2) / 3) + 1, '\0');
	int n = EVP_EncodeBlock(reinterpret_cast<unsigned char *>(out.data()),
				reinterpret_cast<const unsigned char *>(s.data()), int(s.size()));
	out.resize(std::size_t(n));
	return out;
}

std::optional<std::string> unb64(std::string_view s)
{
	if (s.size() % 4)
		return std::nullopt;
	std::string out(3 * s.size() / 4 + 1, '\0');
	int n = EVP_DecodeBlock(reinterpret_cast<unsigned char *>(out.data()),
				reinterpret_cast<const unsigned char *>(s.data()), int(s.size()));
	if (n < 0)
		return std::nullopt;
	/* EVP_DecodeBlock counts the padding's zero bytes */
	std::size_t pad = s.size() >= 2 ? (s[s.size() - 1] == '=') + (s[s.size() - 2] == '=') : 0;
	out.resize(std::size_t(n) - pad);
	return out;
}

/* The end of a prefix range: the prefix with its last byte incremented. */
std::string range_end(std::string p)
{
	while (!p.empty() && static_cast<unsigned char>(p.back()) == 0xff)
		p.pop_back();
	if (!p.empty())
		p.back() = char(p.back() + 1);
	return p;
}

/* ---- HTTP: one POST, the whole answer, or a stream of lines ------------- */

struct curl_deleter {
	void operator()(CURL *c) const noexcept { curl_easy_cleanup(c); }
};
using curl_ptr = std::unique_ptr<CURL, curl_deleter>;
struct slist_deleter {
	void operator()(curl_slist *l) const noexcept { curl_slist_free_all(l); }
};

class http {
public:
	explicit http(std::string base) : base_(std::move(base)), c_(curl_easy_init()) {}

	/* POST @body to @path; the answer as JSON, or the reason it failed. */
	std::optional<json> post(const std::string &path, const json &body, std::string &err,
				 long timeout_s = 5)
	{
		std::string out;
		if (!perform(path, body, timeout_s, &out, {}, err))
			return std::nullopt;
		json j = json::parse(out, nullptr, false);
		if (j.is_discarded()) {
			err = "not JSON: " + out.substr(0, 120);
			return std::nullopt;
		}
		if (j.contains("error")) {
			err = j.value("message", j["error"].dump());
			return std::nullopt;
		}
		return j;
	}

	/* POST and hand every complete line of the answer to @line, until it
	 * returns false, the connection ends or stopping is set. */
	bool stream(const std::string &path, const json &body,
		    const std::function<bool(const std::string &)> &line, std::string &err)
	{
		return perform(path, body, 0, nullptr, line, err);
	}

private:
	struct sink {
		std::string *all;
		std::string buf;
		const std::function<bool(const std::string &)> *line;
	};

	static size_t write_cb(char *p, size_t sz, size_t n, void *arg)
	{
		auto *s = static_cast<sink *>(arg);
		if (s->all) {
			s->all->append(p, sz * n);
			return sz * n;
		}
		s->buf.append(p, sz * n);
		std::size_t nl;
		while ((nl = s->buf.find('\n')) != std::string::npos) {
			std::string l = s->buf.substr(0, nl);
			s->buf.erase(0, nl + 1);
			if (!l.empty() && !(*s->line)(l))
				return 0; /* stop the transfer */
		}
		return sz * n;
	}

	static int progress_cb(void *, curl_off_t, curl_off_t, curl_off_t, curl_off_t)
	{
		return stopping ? 1 : 0;
	}

	bool perform(const std::string &path, const json &body, long timeout_s, std::string *all,
		     const std::function<bool(const std::string &)> &line, std::string &err)
	{
		if (!c_) {
			err = "curl_easy_init failed";
			return false;
		}
		CURL *c = c_.get();
		std::string url = base_ + path, data = body.dump();
		std::unique_ptr<curl_slist, slist_deleter> hdr(
			curl_slist_append(nullptr, "Content-Type: application/json"));
		sink s{all, {}, &line};
		char ebuf[CURL_ERROR_SIZE] = "";

		curl_easy_reset(c);
		curl_easy_setopt(c, CURLOPT_URL, url.c_str());
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, data.c_str());
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr.get());
		curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, write_cb);
		curl_easy_setopt(c, CURLOPT_WRITEDATA, &s);
		curl_easy_setopt(c, CURLOPT_ERRORBUFFER, ebuf);
		curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 5L);
		curl_easy_setopt(c, CURLOPT_TIMEOUT, timeout_s);
		curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
		if (!all) {
			/* a watch ends when the daemon stops (the last calls, such
			 * as the lease's revocation, must not) */
			curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
			curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, progress_cb);
			/* a watch: a dead server must not hang it forever */
			curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
			curl_easy_setopt(c, CURLOPT_TCP_KEEPIDLE, 5L);
			curl_easy_setopt(c, CURLOPT_TCP_KEEPINTVL, 2L);
		}
		CURLcode rc = curl_easy_perform(c);
		long code = 0;
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
		if (rc != CURLE_OK && rc != CURLE_WRITE_ERROR) {
			err = ebuf[0] ? ebuf : curl_easy_strerror(rc);
			return false;
		}
		if (code != 200) {
			err = "HTTP " + std::to_string(code) + (all ? ": " + all->substr(0, 120) : "");
			return false;
		}
		return true;
	}

	std::string base_;
	curl_ptr c_;
};

/* ---- what etcd says about a node ---------------------------------------- */

struct member {
	std::uint32_t id = 0;
	node_addr addr;
	std::uint32_t epoch = 0;
};

std::optional<member> parse_member(const std::string &key, const std::string &value,
				   const config &cfg)
{
	if (key.compare(0, cfg.prefix.size(), cfg.prefix))
		return std::nullopt;
	auto id = parse_node_id(key.substr(cfg.prefix.size()));
	json j = json::parse(value, nullptr, false);
	if (!id || j.is_discarded() || !j.is_object() || !j.contains("address") ||
	    !j["address"].is_string() || !j.contains("port") || !j["port"].is_number_unsigned())
		return std::nullopt;
	std::string a = j["address"];
	std::uint64_t port = j["port"];
	auto addr = parse_node_addr(a.find(':') != std::string::npos ? "[" + a + "]" : a);
	if (!addr || port == 0 || port > 65535 || j.value("id", std::uint64_t(*id + 1)) != *id)
		return std::nullopt;
	addr->port = std::uint16_t(port);
	member m{*id, *addr, std::uint32_t(j.value("epoch", std::uint64_t(0)))};
	return m;
}

/* An event of the watch: a node's key was put (member) or deleted. */
struct event {
	std::uint32_t id;
	std::optional<member> put;
};

/* ---- the module's side ---------------------------------------------------- */

std::optional<std::uint64_t> param(const char *name)
{
	auto v = caladan::sysfs::module_param(name, rooted(caladan::sysfs::module_dir).c_str());
	return v ? std::optional<std::uint64_t>(*v) : std::nullopt;
}

class daemon_state {
public:
	daemon_state(const config &cfg) : cfg_(cfg), kv_(cfg.endpoint) {}

	int run();

private:
	bool open_module();
	bool register_self();
	bool keepalive();
	void revoke();
	bool resync();
	void apply(const member &m);
	void remove(std::uint32_t id, const char *why);
	void watch_loop(std::int64_t from_rev);

	const config &cfg_;
	http kv_;
	std::optional<genl_nl> nl_;
	std::uint32_t self_id_ = 0, epoch_ = 0;
	std::uint16_t port_ = 0;
	std::string lease_;
	std::set<std::uint32_t> managed_; /* ids we added from etcd */

	std::mutex mu_;
	std::condition_variable cv_;
	std::deque<event> events_; /* mu_ */
	bool watch_lost_ = false;  /* mu_: the watch ended; resync */
	std::int64_t watch_from_ = 0; /* main thread: where a new watch starts */
};

bool daemon_state::open_module()
{
	auto id = param("node_id"), ep = param("epoch"), port = param("fabric_port");
	if (!id || !ep || !port)
		return false;
	auto nl = fabric_open();
	if (!nl)
		return false;
	nl_.emplace(std::move(*nl));
	self_id_ = std::uint32_t(*id);
	epoch_ = std::uint32_t(*ep);
	port_ = std::uint16_t(*port);
	return true;
}

bool daemon_state::register_self()
{
	std::string err;
	auto g = kv_.post("/v3/lease/grant", {{"TTL", cfg_.ttl}}, err);
	if (!g || !g->contains("ID")) {
		say("etcd %s: lease grant: %s", cfg_.endpoint.c_str(), err.c_str());
		return false;
	}
	lease_ = (*g)["ID"].get<std::string>();
	char buf[INET6_ADDRSTRLEN] = "";
	inet_ntop(cfg_.self_addr.family, cfg_.self_addr.bytes.data(), buf, sizeof(buf));
	json v = {{"id", self_id_},
		  {"address", buf},
		  {"port", cfg_.self_addr.port ? cfg_.self_addr.port : port_},
		  {"epoch", epoch_}};
	std::string key = cfg_.prefix + std::to_string(self_id_);
	if (!kv_.post("/v3/kv/put", {{"key", b64(key)}, {"value", b64(v.dump())}, {"lease", lease_}},
		      err)) {
		say("etcd: put %s: %s", key.c_str(), err.c_str());
		return false;
	}
	say("registered node %u (%s, epoch %u) as %s, lease %s, TTL %u s", self_id_,
	    v["address"].get<std::string>().c_str(), epoch_, key.c_str(), lease_.c_str(), cfg_.ttl);
	return true;
}

/* false: the lease is gone (expired or etcd lost it): register again */
bool daemon_state::keepalive()
{
	std::string err;
	auto r = kv_.post("/v3/lease/keepalive", {{"ID", lease_}}, err);
	if (!r) {
		say("etcd: keepalive: %s", err.c_str());
		return true; /* etcd unreachable: the lease may still live */
	}
	const json &res = r->contains("result") ? (*r)["result"] : *r;
	std::string ttl = res.value("TTL", "0");
	return ttl != "0";
}

void daemon_state::revoke()
{
	std::string err;
	if (!lease_.empty() && kv_.post("/v3/lease/revoke", {{"ID", lease_}}, err))
		say("left: lease %s revoked", lease_.c_str());
}

void daemon_state::remove(std::uint32_t id, const char *why)
{
	if (!managed_.erase(id))
		return;
	auto st = fabric_node_del(*nl_, id);
	if (st)
		say("node %u deleted (%s)", id, why);
	else if (st.error().ec != errno_code(ENOENT))
		say("node %u: node del: %s", id, st.error().ec.message().c_str());
}

void daemon_state::apply(const member &m)
{
	if (m.id == self_id_)
		return;
	auto nodes = get_nodes(*nl_, m.id);
	if (nodes && !nodes->empty()) {
		if (node_is_at(nodes->front(), m.addr)) {
			managed_.insert(m.id);
			return;
		}
		/* moved: the old address goes (and its proxies with it) */
		if (auto st = fabric_node_del(*nl_, m.id); !st)
			say("node %u: node del: %s", m.id, st.error().ec.message().c_str());
	}
	auto st = fabric_node_add(*nl_, m.id, m.addr, false);
	if (!st) {
		say("node %u: node add: %s", m.id, st.error().ec.message().c_str());
		return;
	}
	managed_.insert(m.id);
	say("node %u added: %s (epoch %u)", m.id,
	    format_addr(m.addr.family, m.addr.bytes.data(), m.addr.port).c_str(), m.epoch);
}

/* Everything under the prefix now: add what is new, delete what went. */
bool daemon_state::resync()
{
	std::string err;
	auto r = kv_.post("/v3/kv/range",
			  {{"key", b64(cfg_.prefix)}, {"range_end", b64(range_end(cfg_.prefix))}}, err);
	if (!r) {
		say("etcd: range %s: %s", cfg_.prefix.c_str(), err.c_str());
		return false;
	}
	std::set<std::uint32_t> seen;
	for (const auto &kv : r->value("kvs", json::array())) {
		auto k = unb64(kv.value("key", "")), v = unb64(kv.value("value", ""));
		auto m = k && v ? parse_member(*k, *v, cfg_) : std::nullopt;
		if (!m) {
			say("ignoring a malformed entry %s", k ? k->c_str() : "?");
			continue;
		}
		seen.insert(m->id);
		apply(*m);
	}
	for (auto id : std::set<std::uint32_t>(managed_))
		if (!seen.count(id))
			remove(id, "no longer registered");
	std::int64_t rev = std::stoll((*r)["header"].value("revision", "0"));
	watch_from_ = rev + 1;
	return true;
}

/* The watch thread: events into events_, until the stream ends. */
void daemon_state::watch_loop(std::int64_t from_rev)
{
	http w(cfg_.endpoint);
	std::string err;
	json req = {{"create_request",
		     {{"key", b64(cfg_.prefix)},
		      {"range_end", b64(range_end(cfg_.prefix))},
		      {"start_revision", std::to_string(from_rev)}}}};
	w.stream("/v3/watch", req, [&](const std::string &line) {
		json j = json::parse(line, nullptr, false);
		if (j.is_discarded() || !j.contains("result"))
			return true;
		std::lock_guard<std::mutex> g(mu_);
		for (const auto &e : j["result"].value("events", json::array())) {
			const json &kv = e.value("kv", json::object());
			auto k = unb64(kv.value("key", ""));
			if (!k || k->compare(0, cfg_.prefix.size(), cfg_.prefix))
				continue;
			auto id = parse_node_id(k->substr(cfg_.prefix.size()));
			if (!id)
				continue;
			if (e.value("type", "PUT") == "DELETE") {
				events_.push_back({*id, std::nullopt});
			} else {
				auto v = unb64(kv.value("value", ""));
				auto m = v ? parse_member(*k, *v, cfg_) : std::nullopt;
				if (m)
					events_.push_back({*id, m});
			}
		}
		cv_.notify_one();
		return !stopping.load();
	}, err);
	std::lock_guard<std::mutex> g(mu_);
	watch_lost_ = true;
	cv_.notify_one();
	if (!stopping)
		say("etcd: the watch ended (%s): resync", err.empty() ? "closed" : err.c_str());
}

int daemon_state::run()
{
	if (!open_module()) {
		say("the fractos module is not loaded (or its netlink family is missing)");
		return 1;
	}
	auto next_keepalive = std::chrono::steady_clock::now();
	bool registered = false, need_resync = false;
	std::thread watcher;

	while (!stopping) {
		/* a reloaded module: a new epoch to announce, nodes to add again */
		auto ep = param("epoch");
		if (!ep) {
			std::this_thread::sleep_for(1s);
			continue;
		}
		if (std::uint32_t(*ep) != epoch_) {
			say("the module was reloaded (epoch %u -> %u)", epoch_, std::uint32_t(*ep));
			if (!open_module())
				continue;
			/* the new module knows no node: add them all again (the
			 * watch goes on; joining it would wait for its end) */
			managed_.clear();
			revoke();
			registered = false;
			need_resync = true;
		}
		if (!registered) {
			registered = register_self();
			if (!registered) {
				std::this_thread::sleep_for(1s);
				continue;
			}
			next_keepalive = std::chrono::steady_clock::now();
		}
		bool lost;
		{
			std::lock_guard<std::mutex> g(mu_);
			lost = watch_lost_ || !watcher.joinable();
		}
		if (lost) {
			if (watcher.joinable())
				watcher.join();
			if (!resync()) {
				std::this_thread::sleep_for(1s);
				continue;
			}
			need_resync = false;
			{
				std::lock_guard<std::mutex> g(mu_);
				watch_lost_ = false;
			}
			watcher = std::thread(&daemon_state::watch_loop, this, watch_from_);
		} else if (need_resync) {
			if (!resync()) {
				std::this_thread::sleep_for(1s);
				continue;
			}
			need_resync = false;
		}
		if (std::chrono::steady_clock::now() >= next_keepalive) {
			if (!keepalive()) {
				say("lease %s expired: registering again", lease_.c_str());
				registered = false;
				continue;
			}
			next_keepalive = std::chrono::steady_clock::now() +
					 std::chrono::milliseconds(cfg_.ttl * 1000 / 3);
		}
		std::deque<event> evs;
		{
			std::unique_lock<std::mutex> g(mu_);
			cv_.wait_for(g, 200ms, [&] { return !events_.empty() || watch_lost_; });
			evs.swap(events_);
		}
		for (const auto &e : evs) {
			if (e.put)
				apply(*e.put);
			else if (e.id != self_id_)
				remove(e.id, "its key went: lease expired or it left");
		}
	}
	revoke();
	if (watcher.joinable())
		watcher.join();
	return 0;
}

[[noreturn]] void usage(int rc)
{
	std::fprintf(rc ? stderr : stdout,
		     "usage: fractos-membershipd -a ADDR[:PORT] [-e URL] [-p PREFIX] [-t TTL]\n"
		     "  -a, --address ADDR[:PORT]  how the others reach this node's fabric\n"
		     "                             (IPV4[:PORT], [IPV6]:PORT; port: fabric_port)\n"
		     "  -e, --endpoint URL         etcd's client URL (http://127.0.0.1:2379)\n"
		     "  -p, --prefix PREFIX        the key prefix (/fractos/nodes/)\n"
		     "  -t, --ttl SECONDS          the lease: a silent node is dropped after it\n"
		     "                             (10; 2 to 3600)\n");
	std::exit(rc);
}

} // namespace

int main(int argc, char **argv)
{
	static const option longs[] = {
		{"address", required_argument, nullptr, 'a'},
		{"endpoint", required_argument, nullptr, 'e'},
		{"prefix", required_argument, nullptr, 'p'},
		{"ttl", required_argument, nullptr, 't'},
		{"help", no_argument, nullptr, 'h'},
		{nullptr, 0, nullptr, 0},
	};
	config cfg;
	int c;

	progname = "fractos-membershipd";
	while ((c = getopt_long(argc, argv, "a:e:p:t:h", longs, nullptr)) != -1) {
		switch (c) {
		case 'a': {
			auto a = parse_node_addr(optarg);
			if (!a) {
				std::fprintf(stderr, "fractos-membershipd: bad address \"%s\"\n", optarg);
				usage(2);
			}
			cfg.self_addr = *a;
			cfg.self_addr_text = optarg;
			break;
		}
		case 'e':
			cfg.endpoint = optarg;
			while (!cfg.endpoint.empty() && cfg.endpoint.back() == '/')
				cfg.endpoint.pop_back();
			break;
		case 'p':
			cfg.prefix = optarg;
			if (cfg.prefix.empty() || cfg.prefix.back() != '/')
				cfg.prefix += '/';
			break;
		case 't': {
			auto t = parse_uint(optarg, 2, 3600);
			if (!t)
				usage(2);
			cfg.ttl = unsigned(*t);
			break;
		}
		case 'h':
			usage(0);
		default:
			usage(2);
		}
	}
	if (optind != argc || cfg.self_addr_text.empty())
		usage(2);

	struct sigaction sa {};
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, nullptr);
	sigaction(SIGINT, &sa, nullptr);
	signal(SIGPIPE, SIG_IGN);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	daemon_state d(cfg);
	int rc = d.run();
	curl_global_cleanup();
	return rc;
}
