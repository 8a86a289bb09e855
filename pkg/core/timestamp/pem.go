package timestamp

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
)

// ParseCertificatesPEM parses every "CERTIFICATE" PEM block in data, in
// order, and ignores blocks of any other type (keys, CSRs, ...). It returns
// an error if a certificate block does not parse or if data holds no
// certificate at all.
func ParseCertificatesPEM(data []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	rest := data
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("timestamp: parse PEM certificate #%d: %w", len(certs)+1, err)
		}
		certs = append(certs, cert)
	}
	if len(certs) == 0 {
		return nil, errors.New("timestamp: parse PEM certificates: no CERTIFICATE block found")
	}
	return certs, nil
}

// EncodeCertificatePEM returns c as a single "CERTIFICATE" PEM block (nil
// if c is nil).
func EncodeCertificatePEM(c *x509.Certificate) []byte {
	if c == nil {
		return nil
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}
