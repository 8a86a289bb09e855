package client_test

// mustSig returns the signature of an in-memory *signing.Signer, which
// never fails; it panics otherwise.
func mustSig(sig []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return sig
}
