package apiserver

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki is the key material of one API server, as PEM.
type pki struct {
	CA                      []byte // certificate only
	ServingCert, ServingKey []byte
	ClientCert, ClientKey   []byte
	SAPublic, SAPrivate     []byte // service-account token signing key
}

// certValidity covers any test run; the clock of a test machine may be off
// by a little, hence the start an hour back.
const certValidity = 24 * time.Hour

// newPKI generates a CA, a serving certificate for 127.0.0.1 and localhost,
// a client certificate in group system:masters (full access without RBAC
// setup) and a service-account key, all ECDSA P-256: fast to generate and
// accepted by kube-apiserver everywhere.
func newPKI() (*pki, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate CA key: %w", err)
	}
	caTmpl := template(pkix.Name{CommonName: "nftproxy-e2e-ca"})
	caTmpl.IsCA = true
	caTmpl.BasicConstraintsValid = true
	caTmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("sign CA: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, fmt.Errorf("parse CA: %w", err)
	}
	p := &pki{CA: pemBlock("CERTIFICATE", caDER)}

	serving := template(pkix.Name{CommonName: "kube-apiserver"})
	serving.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	serving.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	serving.DNSNames = []string{"localhost"}
	if p.ServingCert, p.ServingKey, err = issue(serving, ca, caKey); err != nil {
		return nil, fmt.Errorf("serving certificate: %w", err)
	}
	client := template(pkix.Name{CommonName: "nftproxy-e2e", Organization: []string{"system:masters"}})
	client.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	if p.ClientCert, p.ClientKey, err = issue(client, ca, caKey); err != nil {
		return nil, fmt.Errorf("client certificate: %w", err)
	}
	if p.SAPublic, p.SAPrivate, err = keyPair(); err != nil {
		return nil, fmt.Errorf("service-account key: %w", err)
	}
	return p, nil
}

// template returns a certificate template with a random serial number.
func template(subject pkix.Name) *x509.Certificate {
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62)) // crypto/rand never fails on Linux
	now := time.Now()
	return &x509.Certificate{
		SerialNumber: serial,
		Subject:      subject,
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(certValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}
}

// issue signs tmpl with the CA for a new key and returns both as PEM.
func issue(tmpl, ca *x509.Certificate, caKey crypto.Signer) (cert, key []byte, err error) {
	k, key, err := newKey()
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
	if err != nil {
		return nil, nil, err
	}
	return pemBlock("CERTIFICATE", der), key, nil
}

// keyPair returns a new key as PEM public (PKIX) and private (PKCS#8) keys.
func keyPair() (pub, priv []byte, err error) {
	k, priv, err := newKey()
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		return nil, nil, err
	}
	return pemBlock("PUBLIC KEY", der), priv, nil
}

// newKey returns a new P-256 key, and its private part as PKCS#8 PEM.
func newKey() (*ecdsa.PrivateKey, []byte, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil, nil, err
	}
	return k, pemBlock("PRIVATE KEY", der), nil
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

// files writes the material kube-apiserver reads into dir and returns the
// paths by flag name.
func (p *pki) files(dir string) (map[string]string, error) {
	files := map[string][]byte{
		"client-ca-file":                   p.CA,
		"tls-cert-file":                    p.ServingCert,
		"tls-private-key-file":             p.ServingKey,
		"service-account-key-file":         p.SAPublic,
		"service-account-signing-key-file": p.SAPrivate,
	}
	paths := make(map[string]string, len(files))
	for flag, data := range files {
		path := filepath.Join(dir, flag+".pem")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return nil, fmt.Errorf("write %s: %w", flag, err)
		}
		paths[flag] = path
	}
	return paths, nil
}
