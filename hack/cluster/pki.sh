# Certificates for the cluster (sourced by hack/cluster-up.sh
# after hack/cluster/env.sh): one CA, the API server's serving certificate,
# one client certificate per component (its user and group are what the
# built-in RBAC roles bind), and the service-account signing key. Made with
# openssl, valid for a year, kept under $PKI_DIR; nothing leaves the node.

# client_cert NAME CN [O]: a client certificate signed by the cluster CA.
client_cert() {
	local name="$1" cn="$2" org="${3:-}" subj
	subj="/CN=$cn"
	if [ -n "$org" ]; then subj="/O=$org$subj"; fi
	openssl req -new -newkey rsa:2048 -nodes -subj "$subj" \
		-keyout "$PKI_DIR/$name.key" -out "$PKI_DIR/$name.csr" 2>/dev/null
	openssl x509 -req -in "$PKI_DIR/$name.csr" -CA "$PKI_DIR/ca.crt" -CAkey "$PKI_DIR/ca.key" \
		-CAcreateserial -days 365 -out "$PKI_DIR/$name.crt" \
		-extfile <(printf 'extendedKeyUsage=clientAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n') 2>/dev/null
}

# make_pki creates every key and certificate the cluster uses.
make_pki() {
	mkdir -p "$PKI_DIR"
	openssl req -x509 -new -newkey rsa:2048 -nodes -days 365 -subj "/CN=nftproxy-cluster-ca" \
		-keyout "$PKI_DIR/ca.key" -out "$PKI_DIR/ca.crt" \
		-addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
	openssl req -new -newkey rsa:2048 -nodes -subj "/CN=kube-apiserver" \
		-keyout "$PKI_DIR/apiserver.key" -out "$PKI_DIR/apiserver.csr" 2>/dev/null
	local sans="IP:$NODE_IP,IP:$KUBERNETES_SERVICE_IP,IP:127.0.0.1"
	sans="$sans,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
	openssl x509 -req -in "$PKI_DIR/apiserver.csr" -CA "$PKI_DIR/ca.crt" -CAkey "$PKI_DIR/ca.key" \
		-CAcreateserial -days 365 -out "$PKI_DIR/apiserver.crt" \
		-extfile <(printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n' "$sans") 2>/dev/null
	client_cert admin kubernetes-admin system:masters
	client_cert apiserver-kubelet-client kube-apiserver-kubelet-client system:masters
	client_cert controller-manager system:kube-controller-manager
	client_cert scheduler system:kube-scheduler
	local i
	for i in $(seq 1 "$NODES"); do
		client_cert "kubelet-node$i" "system:node:$(node_name "$i")" system:nodes
	done
	openssl genrsa -out "$PKI_DIR/sa.key" 2048 2>/dev/null
	openssl rsa -in "$PKI_DIR/sa.key" -pubout -out "$PKI_DIR/sa.pub" 2>/dev/null
	rm -f "$PKI_DIR"/*.csr
}

# kubeconfig NAME: $CLUSTER_DIR/NAME.kubeconfig for the client certificate
# NAME, pointing at the API server's address on the node.
kubeconfig() {
	cat >"$CLUSTER_DIR/$1.kubeconfig" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters:
- name: nftproxy-cluster
  cluster:
    server: https://$NODE_IP:$APISERVER_PORT
    certificate-authority: $PKI_DIR/ca.crt
users:
- name: $1
  user:
    client-certificate: $PKI_DIR/$1.crt
    client-key: $PKI_DIR/$1.key
contexts:
- name: nftproxy-cluster
  context:
    cluster: nftproxy-cluster
    user: $1
current-context: nftproxy-cluster
KUBECONFIG
}
