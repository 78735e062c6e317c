// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "tls.h"

struct rt_tls {
	SSL_CTX *ctx;
};

struct rt_tls_conn {
	SSL *ssl;
	bool wants_write;
	char error[256];
};

/* OpenSSL's queued errors as one line (the first one says most). */
static void error_line(char *buf, size_t size, const char *what)
{
	unsigned long e = ERR_get_error();
	char reason[200] = "unknown error";

	if (e)
		ERR_error_string_n(e, reason, sizeof(reason));
	ERR_clear_error();
	snprintf(buf, size, "%s: %s", what, reason);
}

int rt_tls_new(struct rt_tls **out, const char *cert_file, const char *key_file,
	       const char *ca_file, struct rt_why *why)
{
	struct rt_tls *tls = calloc(1, sizeof(*tls));
	const char *what;

	*out = NULL;
	if (!tls)
		return -ENOMEM;
	tls->ctx = SSL_CTX_new(TLS_server_method());
	what = "creating the TLS context";
	if (!tls->ctx)
		goto fail;
	what = "TLS 1.3 only";
	if (!SSL_CTX_set_min_proto_version(tls->ctx, TLS1_3_VERSION))
		goto fail;
	what = cert_file;
	if (SSL_CTX_use_certificate_chain_file(tls->ctx, cert_file) != 1)
		goto fail;
	what = key_file;
	if (SSL_CTX_use_PrivateKey_file(tls->ctx, key_file, SSL_FILETYPE_PEM) != 1 ||
	    SSL_CTX_check_private_key(tls->ctx) != 1)
		goto fail;
	what = ca_file;
	if (SSL_CTX_load_verify_locations(tls->ctx, ca_file, NULL) != 1)
		goto fail;
	/* A client without a certificate signed by the CA does not get past the handshake. */
	SSL_CTX_set_verify(tls->ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
	/* No session tickets: a handshake then never writes once it is done. */
	SSL_CTX_set_num_tickets(tls->ctx, 0);
	/* A client that vanished is disconnected, as on the Unix socket. */
	SSL_CTX_set_options(tls->ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
	SSL_CTX_set_mode(tls->ctx, SSL_MODE_ENABLE_PARTIAL_WRITE |
				   SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	*out = tls;
	return 0;
fail:
	error_line(why->text, sizeof(why->text), what);
	rt_tls_free(tls);
	return -EINVAL;
}

void rt_tls_free(struct rt_tls *tls)
{
	if (!tls)
		return;
	SSL_CTX_free(tls->ctx);
	free(tls);
}

int rt_tls_conn_new(struct rt_tls *tls, int fd, struct rt_tls_conn **out)
{
	struct rt_tls_conn *c = calloc(1, sizeof(*c));

	*out = NULL;
	if (!c)
		return -ENOMEM;
	c->ssl = SSL_new(tls->ctx);
	if (!c->ssl || SSL_set_fd(c->ssl, fd) != 1) {
		SSL_free(c->ssl);
		free(c);
		ERR_clear_error();
		return -ENOMEM;
	}
	SSL_set_accept_state(c->ssl);
	*out = c;
	return 0;
}

void rt_tls_conn_free(struct rt_tls_conn *c)
{
	if (!c)
		return;
	/* Best effort close_notify; the socket is non-blocking and about to close. */
	if (SSL_is_init_finished(c->ssl))
		SSL_shutdown(c->ssl);
	SSL_free(c->ssl);
	ERR_clear_error();
	free(c);
}

/* Maps an OpenSSL result to 0, -EAGAIN or -errno, and keeps the reason. */
static int result(struct rt_tls_conn *c, int ret, const char *what)
{
	int err = SSL_get_error(c->ssl, ret);
	long verify;

	c->wants_write = false;
	switch (err) {
	case SSL_ERROR_NONE:
		return 0;
	case SSL_ERROR_WANT_READ:
		return -EAGAIN;
	case SSL_ERROR_WANT_WRITE:
		c->wants_write = true;
		return -EAGAIN;
	case SSL_ERROR_ZERO_RETURN:
		snprintf(c->error, sizeof(c->error), "%s: closed by the peer", what);
		return -ECONNRESET;
	case SSL_ERROR_SYSCALL:
		snprintf(c->error, sizeof(c->error), "%s: %s", what,
			 errno ? strerror(errno) : "connection closed");
		ERR_clear_error();
		return errno ? -errno : -ECONNRESET;
	default:
		error_line(c->error, sizeof(c->error), what);
		verify = SSL_get_verify_result(c->ssl);
		if (verify != X509_V_OK) {
			size_t len = strlen(c->error);

			snprintf(c->error + len, sizeof(c->error) - len, " (%s)",
				 X509_verify_cert_error_string(verify));
		}
		return -EPROTO;
	}
}

int rt_tls_handshake(struct rt_tls_conn *c)
{
	ERR_clear_error();
	errno = 0;
	return result(c, SSL_do_handshake(c->ssl), "TLS handshake");
}

ssize_t rt_tls_read(struct rt_tls_conn *c, void *buf, size_t len)
{
	size_t n = 0;

	ERR_clear_error();
	errno = 0;
	if (SSL_read_ex(c->ssl, buf, len, &n) == 1)
		return (ssize_t)n;
	/* close_notify is the peer's clean end, as recv()'s 0 is. */
	if (SSL_get_error(c->ssl, 0) == SSL_ERROR_ZERO_RETURN)
		return 0;
	return result(c, 0, "TLS read");
}

ssize_t rt_tls_write(struct rt_tls_conn *c, const void *buf, size_t len)
{
	size_t n = 0;

	ERR_clear_error();
	errno = 0;
	if (SSL_write_ex(c->ssl, buf, len, &n) == 1)
		return (ssize_t)n;
	return result(c, 0, "TLS write");
}

bool rt_tls_has_pending(const struct rt_tls_conn *c)
{
	return SSL_pending(c->ssl) > 0;
}

bool rt_tls_wants_write(const struct rt_tls_conn *c)
{
	return c->wants_write;
}

const char *rt_tls_conn_error(const struct rt_tls_conn *c)
{
	return c->error[0] ? c->error : "no error";
}

int rt_tls_peer_common_name(const struct rt_tls_conn *c, char *buf, size_t size)
{
	X509 *peer = SSL_get0_peer_certificate(c->ssl);
	X509_NAME *subject = peer ? X509_get_subject_name(peer) : NULL;
	const ASN1_STRING *cn;
	int at;

	if (!subject || SSL_get_verify_result(c->ssl) != X509_V_OK)
		return -ENOENT;
	at = X509_NAME_get_index_by_NID(subject, NID_commonName, -1);
	/* Two names would make which one decides a guess: none is taken. */
	if (at < 0 || X509_NAME_get_index_by_NID(subject, NID_commonName, at) >= 0)
		return -ENOENT;
	cn = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, at));
	/* A NUL inside would end the name early when compared: such a name is refused. */
	if (!cn || ASN1_STRING_length(cn) <= 0 || (size_t)ASN1_STRING_length(cn) >= size ||
	    memchr(ASN1_STRING_get0_data(cn), '\0', (size_t)ASN1_STRING_length(cn)))
		return -ENOENT;
	memcpy(buf, ASN1_STRING_get0_data(cn), (size_t)ASN1_STRING_length(cn));
	buf[ASN1_STRING_length(cn)] = '\0';
	return 0;
}
