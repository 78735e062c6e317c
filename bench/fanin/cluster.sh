# Sourced by bench/fanin/run and tests/integration/nats-cluster: a three-node
# JetStream cluster of real nats-server processes on 127.0.0.1.
#   cluster_start DIR: starts n1..n3 (client and route ports picked free),
#     sets cluster_urls (comma-separated), cluster_url[i], cluster_pid[i]
#   cluster_kill I / cluster_restart I: SIGKILL node I; start it again on its ports
#   cluster_stop: every node

# A loopback port nothing listens on.
free_port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 40000))
		(exec 3<> "/dev/tcp/127.0.0.1/$p") 2> /dev/null || { echo "$p"; return; }
	done
}

cluster_node() {
	local i=$1
	nats-server -c "$cluster_dir/n$i.conf" >> "$cluster_dir/n$i.log" 2>&1 &
	cluster_pid[$i]=$!
}

cluster_start() {
	cluster_dir=$1
	mkdir -p "$cluster_dir"
	local i j routes
	for i in 1 2 3; do
		cluster_port[$i]=$(free_port)
		cluster_route[$i]=$(free_port)
	done
	cluster_urls=
	for i in 1 2 3; do
		routes=
		for j in 1 2 3; do
			[ "$i" = "$j" ] || routes="${routes:+$routes, }\"nats-route://127.0.0.1:${cluster_route[$j]}\""
		done
		cat > "$cluster_dir/n$i.conf" <<CONF
server_name: n$i
listen: 127.0.0.1:${cluster_port[$i]}
jetstream { store_dir: "$cluster_dir/n$i" }
cluster { name: ringtap; listen: 127.0.0.1:${cluster_route[$i]}; routes: [$routes] }
CONF
		cluster_url[$i]=nats://127.0.0.1:${cluster_port[$i]}
		cluster_urls=${cluster_urls:+$cluster_urls,}${cluster_url[$i]}
		cluster_node "$i"
	done
	# Ready when JetStream has a meta leader: a stream can be created.
	for _ in $(seq 200); do
		grep -q "JetStream cluster new metadata leader\|Self is new JetStream cluster metadata leader" \
			"$cluster_dir"/n*.log 2> /dev/null && return 0
		sleep 0.1
	done
	echo "cluster did not form:" >&2
	tail -n 5 "$cluster_dir"/n*.log >&2
	return 1
}

cluster_kill() {
	kill -KILL "${cluster_pid[$1]}" 2> /dev/null || true
	wait "${cluster_pid[$1]}" 2> /dev/null || true
}

cluster_restart() {
	cluster_node "$1"
}

cluster_stop() {
	local i
	for i in 1 2 3; do
		[ -n "${cluster_pid[$i]:-}" ] && kill "${cluster_pid[$i]}" 2> /dev/null || true
	done
	for i in 1 2 3; do
		[ -n "${cluster_pid[$i]:-}" ] && wait "${cluster_pid[$i]}" 2> /dev/null || true
	done
}
