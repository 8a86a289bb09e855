package verify

import "github.com/svc-gov/svc/pkg/core/vpec"

// Presigned is the signature check begun while a document is read.
type Presigned = presigned

// ParsePresigned parses doc as Verify does, beginning the signature check
// with opts' key while the records are read.
func ParsePresigned(doc []byte, opts *Options) (*vpec.Document, *Presigned, error) {
	p := &presigned{}
	d, err := vpec.ParseWith(doc, vpec.ParseOptions{SignedTo: p.signedTo(opts)})
	return d, p, err
}

// VerifySigned is verifySigned.
func VerifySigned(d *vpec.Document, p *Presigned, pub, sig []byte) error {
	return verifySigned(d, p, pub, sig)
}
