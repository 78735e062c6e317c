# Certificates for the TLS tests, made with openssl in the current directory.
# Sourced; defines ca NAME and cert NAME CA DAYS_FROM DAYS_TO [SAN].
ossl() { openssl "$@" 2> /dev/null; }
ca() { ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
	-subj "/CN=$1" -keyout "$1.key" -out "$1.crt"; }
# cert NAME CA DAYS_FROM DAYS_TO [SAN]: valid from/to today +/- days
# (openssl ca, since OpenSSL 3.0's x509 cannot date a certificate in the past).
cert() {
	local name=$1 ca=$2 from=$3 to=$4 san=${5:-}
	mkdir -p "$ca.db" && touch "$ca.db/index" && { [ -e "$ca.db/serial" ] || echo 01 > "$ca.db/serial"; }
	cat > "$name.cnf" <<EOC
[ca]
default_ca = this
[this]
database = $ca.db/index
serial = $ca.db/serial
new_certs_dir = $ca.db
certificate = $ca.crt
private_key = $ca.key
default_md = sha256
policy = any
unique_subject = no
x509_extensions = ext
[any]
commonName = supplied
[ext]
basicConstraints = CA:FALSE
${san:+subjectAltName = $san}
EOC
	ossl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$name" \
		-keyout "$name.key" -out "$name.csr"
	ossl ca -batch -config "$name.cnf" -in "$name.csr" -out "$name.crt" -notext \
		-startdate "$(date -u -d "$from days" +%Y%m%d%H%M%SZ)" \
		-enddate "$(date -u -d "$to days" +%Y%m%d%H%M%SZ)"
}
