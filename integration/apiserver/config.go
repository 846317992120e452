package apiserver

import (
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/nftproxy/nftproxy/integration/lab"
)

// restConfig returns a client configuration whose connections are made
// inside ns, where 127.0.0.1 is the API server's loopback.
func restConfig(ns *lab.NS, p *pki) *rest.Config {
	return &rest.Config{
		Host: "https://" + Address,
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   p.CA,
			CertData: p.ClientCert,
			KeyData:  p.ClientKey,
		},
		QPS:   1000,
		Burst: 2000,
		Dial:  ns.DialContext,
	}
}

// writeKubeconfig writes a kubeconfig with the server and credentials, for
// processes inside the namespace.
func writeKubeconfig(path string, p *pki) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["e2e"] = &clientcmdapi.Cluster{Server: "https://" + Address, CertificateAuthorityData: p.CA}
	cfg.AuthInfos["e2e"] = &clientcmdapi.AuthInfo{ClientCertificateData: p.ClientCert, ClientKeyData: p.ClientKey}
	cfg.Contexts["e2e"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: "e2e"}
	cfg.CurrentContext = "e2e"
	return clientcmd.WriteToFile(*cfg, path)
}
