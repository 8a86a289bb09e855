# port.sh: sourced by the scripts that start a server on loopback.

# port_in_use PORT: something accepts connections on 127.0.0.1:PORT.
port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# pick_port REQUESTED DEFAULT VAR prints the port to listen on: REQUESTED
# (named VAR in the error) when it is set, which must be free, else the
# first free one of DEFAULT..DEFAULT+99. It calls die on failure.
pick_port() {
	local requested=$1 port=$2 var=$3 first=$2
	if [[ -n $requested ]]; then
		port_in_use "$requested" && die "port $requested ($var) is already in use"
		echo "$requested"
		return
	fi
	while port_in_use "$port"; do
		((port++))
		((port < first + 100)) || die "no free port in $first-$port"
	done
	echo "$port"
}
