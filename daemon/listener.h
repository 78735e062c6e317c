/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
/*
 * listener: where connections come from. The Unix socket (from systemd, or
 * bound under a name of its own and renamed into place) with peer
 * credentials, the TCP listener with TLS, the clients file.
 */
struct rt_server;
struct rt_server_opts;

int listener_open(struct rt_server *srv, const struct rt_server_opts *opts);
void listener_close(struct rt_server *srv);
/*
 * Reads the clients file again: connections of names no longer listed, or
 * listed with other globs, end with an Error saying so.
 */
int listener_reload_clients(struct rt_server *srv);
