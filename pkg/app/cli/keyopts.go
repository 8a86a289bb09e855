package cli

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/core/trustroot"
	"github.com/svc-gov/svc/pkg/service/keys"
	"github.com/svc-gov/svc/pkg/service/server"
)

// PINEnv is the environment variable holding the PKCS#11 user PIN when a
// pkcs11: key URI has no pin-source. There is no PIN flag: a command line
// shows in ps.
const PINEnv = "SVC_PKCS11_PIN"

// keyOptions is the flag group naming a service's keys by URI
// (docs/KEYS.md); each flag is also a config key and an SVC_* variable.
type keyOptions struct {
	vpec, profile, tsa, log string
	pkcs11Module            string
}

// rootKeyOptions names the root-signing key.
type rootKeyOptions struct{ uri string }

func (o *rootKeyOptions) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.uri, "root-key", "", "key URI of the root-signing key that signs the trust root (default: root-key.pem in the data directory)")
}

func (o *keyOptions) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.vpec, "signing-key", "", "key URI of the VPEC signing key (file:, pkcs11:, hashivault:, awskms:, gcpkms:; default: signing-key.pem in the data directory; env SVC_SIGNING_KEY)")
	cmd.Flags().StringVar(&o.profile, "profile-key", "", "key URI of the profile and circuit signing key (default: profile-key.pem in the data directory, or signing-key.pem in one made before profile keys were separate)")
	cmd.Flags().StringVar(&o.tsa, "tsa-key", "", "key URI of the built-in TSA's ECDSA P-256 key (default: tsa/ in the data directory)")
	cmd.Flags().StringVar(&o.log, "log-key", "", "key URI of the transparency log's checkpoint key (default: log-key.pem in the data directory)")
	cmd.Flags().StringVar(&o.pkcs11Module, "pkcs11-module", "", "PKCS#11 module for pkcs11: key URIs without module-path (env SVC_PKCS11_MODULE); the PIN comes from the URI's pin-source or env "+PINEnv+", never a flag")
}

// providerOptions returns the provider options, the PIN read from the
// environment.
func providerOptions(module string, getenv func(string) string) keys.Options {
	return keys.Options{Getenv: getenv, PKCS11Module: module, PKCS11PIN: getenv(PINEnv)}
}

// config returns the key configuration, the PIN read from the environment.
func (o *keyOptions) config(getenv func(string) string) server.KeyConfig {
	return server.KeyConfig{VPEC: o.vpec, Profile: o.profile, TSA: o.tsa, Log: o.log,
		Options: providerOptions(o.pkcs11Module, getenv)}
}

// keyError is the CLI error for a configured key that cannot be used, or
// key material that cannot be read.
func keyError(err error) error {
	switch {
	case errors.Is(err, keys.ErrBadURI):
		return &Error{Code: ExitUsage, Err: err, Hint: "fix the key URI (docs/KEYS.md, Key URIs)"}
	case errors.Is(err, server.ErrKeyNotInRoot):
		return &Error{Code: ExitUsage, Err: err, Hint: "see docs/KEYS.md, Rotation"}
	case errors.Is(err, server.ErrNoTrustRoot):
		return &Error{Code: ExitUsage, Err: err, Hint: "check --data-dir (or SVC_DATA_DIR)"}
	case errors.Is(err, trustroot.ErrRotate), errors.Is(err, trustroot.ErrMalformed):
		return &Error{Code: ExitUsage, Err: err, Hint: "see docs/KEYS.md, Rotation and Compromise"}
	case errors.Is(err, server.ErrKey):
		return &Error{Code: ExitFailure, Err: err, Hint: "svc never falls back to another key: make the key reachable (token present, PIN in pin-source or " + PINEnv + ", provider credentials) or configure another key URI"}
	}
	return materialError(err)
}
