// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fractctl secret: how this node admits others, with the cluster secret or
 * with pair keys (per-node identities, Documentation/security.rst).
 *
 *   fractctl [-j] secret [show]
 *   fractctl [-j] secret set [FILE]
 *   fractctl [-j] secret insecure
 *   fractctl [-j] secret forget [ all | cluster | node ID [ all ] ]
 *   fractctl secret derive MASTER node ID peers LIST [generation G]
 *   fractctl [-j] secret row [FILE]
 *
 * derive runs on the admin's machine and needs no module: from a master
 * key M that never leaves that machine it prints node I's row of the
 * pair-key table, for every peer J of LIST (I itself included, for the
 * node's loopback connection to itself):
 *
 *   K(I,J,G) = HMAC-SHA256(M, "fractos v7 pair" | le32 min(I,J) |
 *                          le32 max(I,J) | le32 G)
 *
 * so that I and J derive the same key, and nobody else holds it.  row
 * installs such a file on node I: one AUTH_SET with AUTH_PEER per peer.
 * Keys are wiped from memory once used (stdio reads them unbuffered), and
 * no message ever quotes one.
 */
#include "fractctl.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cinttypes>
#include <map>
#include <set>

namespace fractctl {

pair_row::~pair_row()
{
	for (auto &k : keys)
		OPENSSL_cleanse(k.key.data(), k.key.size());
}

namespace {

constexpr char pair_label[] = "fractos v7 pair";
/* 65536 lines of "peer 4294967295 KEY" and a little more */
constexpr std::size_t max_row_bytes = 8u << 20;

using file_ptr = std::unique_ptr<FILE, int (*)(FILE *)>;

/*
 * @path for reading, "-" being stdin, unbuffered: stdio keeps no copy of
 * a secret in a buffer of its own.
 */
file_ptr open_input(const char *path)
{
	bool in = !std::strcmp(path, "-");
	int (*close)(FILE *) = in ? +[](FILE *) { return 0; } : &std::fclose;
	file_ptr f(in ? stdin : std::fopen(path, "re"), close);

	if (f)
		std::setvbuf(f.get(), nullptr, _IONBF, 0);
	return f;
}

const char *input_name(const char *path)
{
	return std::strcmp(path, "-") ? path : "stdin";
}

/*
 * The secret of @path for @cmd ("secret set"): 16 to 128 bytes, one
 * trailing newline dropped.  @noun names it in errors ("a secret").
 * False after an error message.
 */
bool read_secret_path(const char *cmd, const char *path, const char *noun, secret_buf &s)
{
	auto f = open_input(path);
	if (!f) {
		std::fprintf(stderr, "%s: %s: %s: %s\n", progname, cmd, path, std::strerror(errno));
		return false;
	}
	int err = read_secret(f.get(), s);
	if (err == EMSGSIZE)
		std::fprintf(stderr,
			     "%s: %s: %s: %s has %d to %d bytes (try \"head -c 32 "
			     "/dev/urandom > FILE\")\n",
			     progname, cmd, input_name(path), noun, FRACTOS_AUTH_SECRET_MIN,
			     FRACTOS_AUTH_SECRET_MAX);
	else if (err)
		std::fprintf(stderr, "%s: %s: %s: %s\n", progname, cmd, input_name(path),
			     std::strerror(err));
	return !err;
}

/*
 * All of @f, at most @max bytes, into @s (EFBIG beyond).  Every buffer it
 * outgrows is wiped before it is freed.  Returns 0 or an errno.
 */
int read_all(FILE *f, secret_buf &s, std::size_t max)
{
	std::size_t n = 0;

	for (;;) {
		if (n == s.bytes.size()) {
			if (n > max)
				break;
			std::vector<unsigned char> bigger(std::max<std::size_t>(4096, 2 * n));
			std::memcpy(bigger.data(), s.bytes.data(), n);
			explicit_bzero(s.bytes.data(), n);
			s.bytes.swap(bigger);
		}
		std::size_t got = std::fread(s.bytes.data() + n, 1, s.bytes.size() - n, f);
		n += got;
		if (!got)
			break;
	}
	if (std::ferror(f))
		return errno ? errno : EIO;
	s.bytes.resize(n);
	return n > max ? EFBIG : 0;
}

/* ---- derive ---------------------------------------------------------- */

/* K(@i,@j,@g) from the master key @m into @out; false if libcrypto fails. */
bool derive_pair_key(const secret_buf &m, std::uint32_t i, std::uint32_t j, std::uint32_t g,
		     std::array<unsigned char, pair_key_len> &out)
{
	constexpr std::size_t label_len = sizeof(pair_label) - 1;
	const std::uint32_t le[3] = {std::min(i, j), std::max(i, j), g};
	unsigned char msg[label_len + sizeof(le)];
	unsigned int len = 0;

	std::memcpy(msg, pair_label, label_len);
	for (std::size_t k = 0; k < sizeof(le); k++)
		msg[label_len + k] = static_cast<unsigned char>(le[k / 4] >> (8 * (k % 4)));
	return HMAC(EVP_sha256(), m.bytes.data(), int(m.bytes.size()), msg, sizeof(msg),
		    out.data(), &len) &&
	       len == out.size();
}

/*
 * "1,2,5-9": node ids and ranges into @peers, at most max_row_peers
 * different ones.  Returns an error message, or nothing.
 */
std::optional<std::string> parse_peers(std::string_view s, std::set<std::uint32_t> &peers)
{
	const std::string too_many = "more than " + std::to_string(max_row_peers) + " peers";

	if (s.empty())
		return "an empty peer list";
	for (;;) {
		std::size_t comma = s.find(',');
		std::string_view item = s.substr(0, comma);
		std::size_t dash = item.find('-');
		auto lo = parse_node_id(item.substr(0, dash));
		auto hi = dash == std::string_view::npos ? lo : parse_node_id(item.substr(dash + 1));
		if (!lo || !hi || *hi < *lo)
			return "bad peer list item \"" + std::string(item) +
			       "\" (node ids and ranges: 1,2,5-9)";
		if (*hi - *lo >= max_row_peers)
			return too_many;
		for (std::uint64_t j = *lo; j <= *hi; j++)
			peers.insert(std::uint32_t(j));
		if (peers.size() > max_row_peers)
			return too_many;
		if (comma == std::string_view::npos)
			return std::nullopt;
		s.remove_prefix(comma + 1);
	}
}

int write_all(int fd, std::string_view s)
{
	while (!s.empty()) {
		ssize_t n = ::write(fd, s.data(), s.size());
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno;
		s.remove_prefix(std::size_t(n));
	}
	return 0;
}

int secret_derive(const options &, int argc, char **argv)
{
	const char *cmd = "secret derive";
	std::optional<std::uint32_t> node, generation;
	std::set<std::uint32_t> peers;
	bool have_peers = false;

	if (argc < 1)
		return usage_error(cmd, "%s", "needs MASTER, node ID and peers LIST");
	const char *path = argv[0];
	for (argc--, argv++; argc > 0; argc -= 2, argv += 2) {
		std::string_view key = argv[0];
		if ((key != "node" || node) && (key != "peers" || have_peers) &&
		    (key != "generation" || generation))
			return usage_error(cmd, "unexpected argument \"%s\"", argv[0]);
		if (argc < 2)
			return usage_error(cmd, "%s needs a value", argv[0]);
		if (key == "node") {
			node = parse_node_id(argv[1]);
			if (!node)
				return usage_error(cmd, "bad node id \"%s\" (0 to 4294967295)",
						   argv[1]);
		} else if (key == "peers") {
			if (auto e = parse_peers(argv[1], peers))
				return usage_error(cmd, "%s", e->c_str());
			have_peers = true;
		} else {
			auto g = parse_uint(argv[1], 1, UINT32_MAX);
			if (!g)
				return usage_error(cmd, "bad generation \"%s\" (1 to 4294967295)",
						   argv[1]);
			generation = std::uint32_t(*g);
		}
	}
	if (!node || !have_peers)
		return usage_error(cmd, "%s", !node ? "needs node ID" : "needs peers LIST");
	std::uint32_t g = generation.value_or(1);

	secret_buf master;
	if (!read_secret_path(cmd, path, "a master key", master))
		return exit_error;

	/* Reserved once: the text is never moved, and wiped at the end. */
	const std::string i = std::to_string(*node), gs = std::to_string(g);
	std::string out;
	out.reserve(256 + peers.size() * (sizeof("peer 4294967295 ") + 2 * pair_key_len));
	out += "# fractos pair keys of node " + i + ", generation " + gs +
	       " (fractctl secret derive): keep it secret\n";
	out += "node " + i + " generation " + gs + "\n";
	std::array<unsigned char, pair_key_len> key;
	bool ok = true;
	for (std::uint32_t j : peers) {
		ok = derive_pair_key(master, *node, j, g, key);
		if (!ok)
			break;
		out += "peer " + std::to_string(j) + " ";
		for (unsigned char b : key) {
			out += "0123456789abcdef"[b >> 4];
			out += "0123456789abcdef"[b & 15];
		}
		out += '\n';
	}
	OPENSSL_cleanse(key.data(), key.size());
	int err = 0;
	if (ok) {
		struct stat st;
		if (::fstat(STDOUT_FILENO, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 077))
			std::fprintf(stderr,
				     "%s: %s: warning: the row goes to a file others may read "
				     "(mode %03o): umask 077 before creating it\n",
				     progname, cmd, unsigned(st.st_mode & 0777));
		err = write_all(STDOUT_FILENO, out);
	}
	OPENSSL_cleanse(out.data(), out.size());
	if (!ok) {
		std::fprintf(stderr, "%s: %s: HMAC-SHA256 failed (libcrypto)\n", progname, cmd);
		return exit_error;
	}
	if (err) {
		std::fprintf(stderr, "%s: %s: stdout: %s\n", progname, cmd, std::strerror(err));
		return exit_error;
	}
	return exit_ok;
}

/* ---- row files --------------------------------------------------------- */

int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

bool parse_key(std::string_view h, std::array<unsigned char, pair_key_len> &out)
{
	if (h.size() != 2 * out.size())
		return false;
	for (std::size_t i = 0; i < out.size(); i++) {
		int hi = hex_digit(h[2 * i]), lo = hex_digit(h[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return false;
		out[i] = static_cast<unsigned char>(hi << 4 | lo);
	}
	return true;
}

/*
 * A word of a row for an error message, unless it might be (a piece of) a
 * key: a long word of hex digits.
 */
std::string quoted(std::string_view w)
{
	bool hex = std::all_of(w.begin(), w.end(), [](char c) { return hex_digit(c) >= 0; });
	if (hex && w.size() > 10)
		return "[a long hex word, not shown]";
	return "\"" + std::string(w) + "\"";
}

bool parse_row(std::string_view text, pair_row &row, std::vector<row_error> &errors)
{
	std::map<std::uint32_t, unsigned> seen; /* peer -> its line */
	unsigned n = 0, node_line = 0, peer_lines = 0;

	row.keys.clear();
	row.keys.reserve(std::min<std::size_t>(
		std::size_t(std::count(text.begin(), text.end(), '\n')) + 1, max_row_peers));
	while (!text.empty()) {
		std::size_t eol = text.find('\n');
		std::string_view line = text.substr(0, eol);
		text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
		n++;
		auto err = [&](std::string what) { errors.push_back({n, std::move(what)}); };
		if (line.find('\0') != std::string_view::npos) {
			err("a NUL byte");
			continue;
		}
		auto w = words(line);
		if (w.empty())
			continue;
		if (w[0] == "node") {
			auto id = w.size() == 4 && w[2] == "generation" ? parse_node_id(w[1])
									 : std::nullopt;
			auto g = id ? parse_uint(w[3], 1, UINT32_MAX) : std::nullopt;
			if (!g)
				err("node takes ID generation G (G: 1 to 4294967295)");
			else if (node_line)
				err("node again (first on line " + std::to_string(node_line) + ")");
			else
				row.node = *id, row.generation = std::uint32_t(*g), node_line = n;
			continue;
		}
		if (w[0] != "peer") {
			err("unknown line " + quoted(w[0]) + " (node, peer or a # comment)");
			continue;
		}
		peer_lines++;
		auto j = w.size() == 3 ? parse_node_id(w[1]) : std::nullopt;
		auto first = j ? seen.find(*j) : seen.end();
		if (w.size() != 3) {
			err("peer takes ID KEY (64 hex digits)");
		} else if (!j) {
			err("bad peer id " + quoted(w[1]) + " (0 to 4294967295)");
		} else if (first != seen.end()) {
			err("peer " + std::to_string(*j) + " again (first on line " +
			    std::to_string(first->second) + ")");
		} else if (row.keys.size() == max_row_peers) {
			err("more than " + std::to_string(max_row_peers) + " peers");
			break;
		} else {
			row.keys.push_back({*j, {}});
			if (parse_key(w[2], row.keys.back().key)) {
				seen[*j] = n;
				continue;
			}
			OPENSSL_cleanse(row.keys.back().key.data(), pair_key_len);
			row.keys.pop_back();
			err("peer " + std::to_string(*j) + ": the key is not " +
			    std::to_string(2 * pair_key_len) + " hex digits");
		}
	}
	if (!node_line)
		errors.push_back({0, "no \"node ID generation G\" line"});
	if (!peer_lines)
		errors.push_back({0, "no peer line"});
	return errors.empty();
}

/* ---- show ---------------------------------------------------------------- */

/* Both kinds of keys: the cluster secret still makes anyone anyone. */
bool cluster_and_pairs(const auth_state &a)
{
	return a.key_id && a.pairs.value_or(0);
}

std::string pair_keys_text(std::uint32_t pairs)
{
	return "pair keys of " + std::to_string(pairs) + (pairs == 1 ? " node" : " nodes");
}

/* How this node admits others, for people ("secret show", status). */
std::string auth_summary(const auth_state &a)
{
	std::string s;

	switch (a.mode) {
	case FRACTOS_AUTH_SECRET:
		if (!a.key_id)
			return pair_keys_text(a.pairs.value_or(0)) + " (no cluster secret)";
		s = "secret " + hex32(a.key_id);
		if (a.prev_key_id)
			s += " (previous " + hex32(*a.prev_key_id) + " still accepted)";
		if (a.pairs.value_or(0))
			s += ", " + pair_keys_text(*a.pairs);
		return s;
	case FRACTOS_AUTH_INSECURE:
		return "INSECURE (nodes are admitted without authentication)";
	case FRACTOS_AUTH_NONE:
		return "none (no secret: every node is refused)";
	}
	return "unknown";
}

void secret_usage(FILE *f)
{
	std::fprintf(f,
		     "Usage: %s [-j] secret [ show ]\n"
		     "       %s [-j] secret set [ FILE ]   (FILE or stdin: %d to %d bytes, one\n"
		     "                                      trailing newline dropped)\n"
		     "       %s [-j] secret insecure\n"
		     "       %s [-j] secret forget [ all | cluster | node ID [ all ] ]\n"
		     "       %s secret derive MASTER node ID peers LIST [ generation G ]\n"
		     "       %s [-j] secret row [ FILE ]\n"
		     "LIST := node ids and ranges, as 1,2,5-9 (at most %zu); G := 1 (default) to\n"
		     "4294967295; MASTER: a file of %d to %d bytes (- for stdin), on the\n"
		     "admin's machine only.\n"
		     "Cluster secret: every node of a cluster needs the same one.  Setting a new\n"
		     "key keeps the previous one accepted until \"secret forget\": set it on every\n"
		     "node, then forget.  Keys can never be read back; the key id shown names one.\n"
		     "Pair keys: derive prints node ID's row (its key with each peer) from the\n"
		     "master key; create the file first: umask 077; %s secret derive ... > ROW.\n"
		     "row installs it on that node (stdin without FILE).  Once every node has its\n"
		     "row: \"secret forget cluster\" on every node.  Rotation: derive generation\n"
		     "G+1, install the rows everywhere, then \"secret forget\".\n"
		     "forget: the previous keys; all: every key; cluster: the cluster secrets;\n"
		     "node ID: that node's previous pair key, all: both of its pair keys.\n",
		     progname, progname, FRACTOS_AUTH_SECRET_MIN, FRACTOS_AUTH_SECRET_MAX,
		     progname, progname, progname, progname, max_row_peers,
		     FRACTOS_AUTH_SECRET_MIN, FRACTOS_AUTH_SECRET_MAX, progname);
}

int secret_help(const options &, int, char **)
{
	secret_usage(stdout);
	return exit_ok;
}

int secret_show(const options &opts, int argc, char **argv)
{
	if (argc > 0)
		return usage_error("secret show", "unexpected argument \"%s\"", argv[0]);
	auto nl = fabric_open();
	if (!nl) {
		report("secret show", nl.error());
		return exit_error;
	}
	auto a = query_auth(*nl);
	if (!a) {
		report("secret show", a.error());
		return exit_error;
	}
	if (opts.json) {
		json_writer j;
		j.str("mode", auth_mode_name(a->mode));
		if (a->key_id)
			j.str("key_id", hex32(a->key_id));
		if (a->prev_key_id)
			j.str("previous_key_id", hex32(*a->prev_key_id));
		if (a->pairs)
			j.num("pairs", *a->pairs);
		std::printf("%s\n", j.finish().c_str());
		return exit_ok;
	}
	std::printf("%s\n", auth_summary(*a).c_str());
	if (cluster_and_pairs(*a))
		std::printf("warning: the cluster secret still admits any node as any other: "
			    "forget it once every node has its row (%s secret forget cluster)\n",
			    progname);
	return exit_ok;
}

/* ---- changes ----------------------------------------------------------- */

int secret_set(const options &opts, int argc, char **argv)
{
	if (argc > 1)
		return usage_error("secret set", "%s", "too many arguments");
	secret_buf s;
	if (!read_secret_path("secret set", argc ? argv[0] : "-", "a secret", s))
		return exit_error;
	auto nl = fabric_open();
	if (!nl) {
		report("secret set", nl.error());
		return exit_error;
	}
	auto st = auth_set(*nl, s.bytes.data(), s.bytes.size(), std::nullopt);
	if (!st) {
		report("secret set", st.error(),
		       {{ENOENT, "this kernel has no hmac(sha256)"}});
		return exit_error;
	}
	if (opts.json)
		return secret_show(opts, 0, nullptr);
	return exit_ok;
}

int secret_row(const options &opts, int argc, char **argv)
{
	if (argc > 1)
		return usage_error("secret row", "%s", "too many arguments");
	const char *path = argc ? argv[0] : "-";
	auto f = open_input(path);
	if (!f) {
		std::fprintf(stderr, "%s: secret row: %s: %s\n", progname, path,
			     std::strerror(errno));
		return exit_error;
	}
	pair_row row;
	std::vector<row_error> errors;
	if (!read_row(f.get(), row, errors)) {
		for (const auto &e : errors)
			std::fprintf(stderr, "%s: secret row: %s\n", progname,
				     row_error_text(input_name(path), e).c_str());
		return exit_error;
	}
	auto nl = fabric_open();
	if (!nl) {
		report("secret row", nl.error());
		return exit_error;
	}
	auto a = query_auth(*nl);
	if (!a) {
		report("secret row", a.error());
		return exit_error;
	}
	if (auto m = row_mismatch(row, a->node)) {
		std::fprintf(stderr, "%s: secret row: %s: %s\n", progname, input_name(path),
			     m->c_str());
		return exit_error;
	}
	std::uint32_t failed = 0;
	auto st = set_row(*nl, row, failed);
	if (!st) {
		std::string what = "secret row: peer " + std::to_string(failed);
		report(what.c_str(), st.error(),
		       {{ENOENT, "this kernel has no hmac(sha256)"},
			{EINVAL, "a module without pair keys?"}});
		return exit_error;
	}
	if (opts.json)
		return secret_show(opts, 0, nullptr);
	return exit_ok;
}

int secret_insecure(const options &opts, int argc, char **argv)
{
	if (argc > 0)
		return usage_error("secret insecure", "unexpected argument \"%s\"", argv[0]);
	auto nl = fabric_open();
	if (!nl) {
		report("secret insecure", nl.error());
		return exit_error;
	}
	auto st = nl->request(FRACTOS_CMD_AUTH_SET, false,
			      {attr_bytes(FRACTOS_A_AUTH_INSECURE, nullptr, 0)});
	if (!st) {
		report("secret insecure", st.error());
		return exit_error;
	}
	if (opts.json)
		return secret_show(opts, 0, nullptr);
	return exit_ok;
}

/* forget [ all | cluster | node ID [ all ] ]: AUTH_FORGET's variants. */
int secret_forget(const options &opts, int argc, char **argv)
{
	std::vector<nl_attr_out> attrs;
	std::string what = "secret forget", hint = "no such key";
	bool cluster = argc > 0 && !std::strcmp(argv[0], "cluster");

	if (cluster) {
		attrs.push_back(attr_bytes(FRACTOS_A_AUTH_CLUSTER, nullptr, 0));
		what += " cluster";
		argc--, argv++;
	} else if (argc > 0 && !std::strcmp(argv[0], "node")) {
		if (argc < 2)
			return usage_error("secret forget", "%s", "node needs an ID");
		auto id = parse_node_id(argv[1]);
		if (!id)
			return usage_error("secret forget", "bad node id \"%s\" (0 to 4294967295)",
					   argv[1]);
		attrs.push_back(attr(FRACTOS_A_AUTH_PEER, *id));
		what += " node " + std::to_string(*id);
		hint = "node " + std::to_string(*id) + " has no pair key";
		argc -= 2, argv += 2;
	}
	if (!cluster && argc > 0 && !std::strcmp(argv[0], "all")) {
		attrs.push_back(attr_bytes(FRACTOS_A_AUTH_ALL, nullptr, 0));
		what += " all";
		argc--, argv++;
	}
	if (argc > 0)
		return usage_error("secret forget", "unexpected argument \"%s\"", argv[0]);
	auto nl = fabric_open();
	if (!nl) {
		report(what.c_str(), nl.error());
		return exit_error;
	}
	auto st = nl->request(FRACTOS_CMD_AUTH_FORGET, false, attrs);
	if (!st) {
		report(what.c_str(), st.error(), {{ENOENT, hint.c_str()}});
		return exit_error;
	}
	if (opts.json)
		return secret_show(opts, 0, nullptr);
	return exit_ok;
}

/* In order: the first match of a prefix wins ("s" is show). */
const subcommand secret_commands[] = {
	{"show", secret_show},	   {"set", secret_set},	      {"insecure", secret_insecure},
	{"forget", secret_forget}, {"derive", secret_derive}, {"row", secret_row},
	{"help", secret_help},
};

} // namespace

bool read_row(FILE *f, pair_row &row, std::vector<row_error> &errors)
{
	secret_buf text;
	int err = read_all(f, text, max_row_bytes);

	if (err == EFBIG)
		errors.push_back({0, "larger than " + std::to_string(max_row_bytes >> 20) + " MiB"});
	else if (err)
		errors.push_back({0, std::strerror(err)});
	if (err)
		return false;
	return parse_row(std::string_view(reinterpret_cast<const char *>(text.bytes.data()),
					  text.bytes.size()),
			 row, errors);
}

std::string row_error_text(std::string_view file, const row_error &e)
{
	std::string s(file);
	if (e.line)
		s += ":" + std::to_string(e.line);
	return s + ": " + e.text;
}

nl_status auth_set(genl_nl &nl, const unsigned char *key, std::size_t len,
		   std::optional<std::uint32_t> peer)
{
	std::vector<nl_attr_out> attrs;

	/* Moved in, never copied (as an initializer list would). */
	attrs.reserve(2);
	attrs.push_back(attr_bytes(FRACTOS_A_AUTH_SECRET, key, len));
	if (peer)
		attrs.push_back(attr(FRACTOS_A_AUTH_PEER, *peer));
	auto st = nl.request(FRACTOS_CMD_AUTH_SET, false, attrs);
	OPENSSL_cleanse(attrs[0].data.data(), attrs[0].data.size());
	return st;
}

nl_status set_row(genl_nl &nl, const pair_row &row, std::uint32_t &failed)
{
	for (const auto &k : row.keys) {
		auto st = auth_set(nl, k.key.data(), k.key.size(), k.peer);
		if (!st) {
			failed = k.peer;
			return st;
		}
	}
	return std::monostate{};
}

std::optional<std::string> row_mismatch(const pair_row &row, std::uint32_t self)
{
	if (row.node == self)
		return std::nullopt;
	return "the row of node " + std::to_string(row.node) + ", but this node is " +
	       std::to_string(self) + " (its own: fractctl secret derive MASTER node " +
	       std::to_string(self) + " peers LIST)";
}

std::optional<std::string> status_auth()
{
	auto nl = fabric_open();
	if (!nl)
		return std::nullopt;
	auto a = query_auth(*nl);
	if (!a)
		return std::nullopt;
	return std::string(auth_mode_name(a->mode)) + ":" + auth_summary(*a);
}

int do_secret(const options &opts, int argc, char **argv)
{
	if (argc == 0)
		return secret_show(opts, 0, argv);
	for (const auto &c : secret_commands)
		if (matches(argv[0], c.name))
			return c.fn(opts, argc - 1, argv + 1);
	return usage_error("secret", "unknown command \"%s\"", argv[0]);
}

} // namespace fractctl
