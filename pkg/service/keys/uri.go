package keys

import (
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Key URI schemes.
const (
	SchemeFile    = "file"
	SchemePKCS11  = "pkcs11"
	SchemeVault   = "hashivault"
	SchemeOpenBao = "openbao"
	SchemeAWS     = "awskms"
	SchemeGCP     = "gcpkms"
)

// URI is a parsed key URI. Exactly the fields of its scheme are set.
type URI struct {
	// Raw is the URI as given.
	Raw string
	// Scheme is one of the Scheme constants.
	Scheme string
	// Path is the private key file of a file: URI.
	Path string
	// PKCS11 is the parsed pkcs11: URI.
	PKCS11 *PKCS11URI
	// VaultKey is the transit key name of a hashivault: or openbao: URI.
	VaultKey string
	// AWSEndpoint is the host[:port] of an awskms://HOST/KEY URI, empty
	// for the public endpoint; AWSKey is the key id, alias or ARN.
	AWSEndpoint, AWSKey string
	// GCPName is the resource name of a Cloud KMS key version.
	GCPName string
}

// uriError is ErrBadURI with the reason and the fix.
func uriError(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadURI, fmt.Sprintf(format, args...))
}

var (
	vaultKeyRE = regexp.MustCompile(`^[A-Za-z0-9_]([A-Za-z0-9_.-]*[A-Za-z0-9_])?$`)
	awsKeyRE   = regexp.MustCompile(`^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|mrk-[0-9a-fA-F]{32}|alias/[A-Za-z0-9/_-]+|arn:aws[a-z-]*:kms:[a-z0-9-]+:[0-9]{12}:(key/[A-Za-z0-9-]+|alias/[A-Za-z0-9/_-]+))$`)
	awsHostRE  = regexp.MustCompile(`^[A-Za-z0-9.-]+(:[0-9]{1,5})?$|^\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?$`)
	gcpNameRE  = regexp.MustCompile(`^projects/[^/]+/locations/[^/]+/keyRings/[^/]+/cryptoKeys/[^/]+/cryptoKeyVersions/[0-9]+$`)
)

// ParseURI parses a key URI; errors match ErrBadURI and say what a valid
// URI of the scheme looks like.
func ParseURI(s string) (*URI, error) {
	u, err := parseURI(s)
	if err != nil {
		return nil, keyErr(s, "parse", err)
	}
	return u, nil
}

func parseURI(s string) (*URI, error) {
	scheme, rest, ok := strings.Cut(s, ":")
	if !ok || scheme == "" {
		return nil, uriError("no scheme: write file:///ABSOLUTE/PATH for a key file, or one of pkcs11:, hashivault://, openbao://, awskms://, gcpkms://")
	}
	u := &URI{Raw: s, Scheme: scheme}
	switch scheme {
	case SchemeFile:
		p, err := url.Parse(s)
		if err != nil {
			return nil, uriError("%v", err)
		}
		if p.Opaque != "" || (p.Host != "" && p.Host != "localhost") || p.User != nil || p.RawQuery != "" || p.Fragment != "" || !strings.HasPrefix(p.Path, "/") {
			return nil, uriError("a file key URI is file:// followed by an absolute path, e.g. file:///etc/svc/signing-key.pem")
		}
		u.Path = p.Path
	case SchemePKCS11:
		p, err := ParsePKCS11URI(s)
		if err != nil {
			return nil, err
		}
		u.PKCS11 = p
	case SchemeVault, SchemeOpenBao:
		name, ok := strings.CutPrefix(rest, "//")
		if !ok || !vaultKeyRE.MatchString(name) {
			return nil, uriError("a Vault transit key URI is %s://KEYNAME (letters, digits, _ . -), e.g. hashivault://svc-vpec; the address, token and mount come from VAULT_ADDR, VAULT_TOKEN and TRANSIT_SECRET_ENGINE_PATH", scheme)
		}
		u.VaultKey = name
	case SchemeAWS:
		r, ok := strings.CutPrefix(rest, "//")
		host, key, ok2 := strings.Cut(r, "/")
		if !ok || !ok2 || (host != "" && !awsHostRE.MatchString(host)) || !awsKeyRE.MatchString(key) {
			return nil, uriError("an AWS KMS key URI is awskms:///KEY or awskms://ENDPOINT/KEY where KEY is a key id, alias/NAME or a key or alias ARN, e.g. awskms:///alias/svc-tsa")
		}
		u.AWSEndpoint, u.AWSKey = host, key
	case SchemeGCP:
		name, ok := strings.CutPrefix(rest, "//")
		if !ok || !gcpNameRE.MatchString(name) {
			return nil, uriError("a Cloud KMS key URI names one key version: gcpkms://projects/P/locations/L/keyRings/R/cryptoKeys/K/cryptoKeyVersions/N")
		}
		u.GCPName = name
	default:
		return nil, uriError("unknown scheme %q: svc opens file:, pkcs11:, hashivault:, openbao:, awskms: and gcpkms: keys", scheme)
	}
	return u, nil
}

// FileURI returns the file: key URI of path, made absolute.
func FileURI(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("key file %s: %w", path, err)
	}
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String(), nil
}

// PKCS11URI is a parsed RFC 7512 PKCS#11 URI naming one private key.
//
// Path attributes select the token (token, manufacturer, model, serial,
// slot-id) and the key on it (object: CKA_LABEL, id: CKA_ID, type: only
// "private"). Query attributes say how to reach it: module-path (the
// PKCS#11 library) and pin-source: "file:///PATH" (the PIN is the file's
// first line) or "env:NAME" (an svc extension: the PIN is in environment
// variable NAME). pin-value is refused: a PIN written in a URI ends up in
// configuration files, logs and process listings.
type PKCS11URI struct {
	Token, Manufacturer, Model, Serial string
	// SlotID is the slot-id attribute, or nil.
	SlotID *uint
	// Object is CKA_LABEL of the key; ID is CKA_ID.
	Object string
	ID     []byte
	// ModulePath is the module-path query attribute.
	ModulePath string
	// PINSource is the pin-source query attribute.
	PINSource string
}

var (
	pkcs11PathAttrs  = []string{"token", "manufacturer", "model", "serial", "slot-id", "object", "id", "type"}
	pkcs11QueryAttrs = []string{"module-path", "pin-source"}
)

// ParsePKCS11URI parses an RFC 7512 URI ("pkcs11:" path attributes
// separated by ";", then optionally "?" and query attributes separated by
// "&"; values percent-encoded). Duplicate and unknown attributes are
// refused, as are characters RFC 7512 does not allow unencoded.
func ParsePKCS11URI(s string) (*PKCS11URI, error) {
	rest, ok := strings.CutPrefix(s, "pkcs11:")
	if !ok {
		return nil, uriError("a PKCS#11 URI starts with pkcs11:")
	}
	path, query, _ := strings.Cut(rest, "?")
	seen := map[string]bool{}
	p := &PKCS11URI{}
	parse := func(part, sep string, allowed []string, extra string) error {
		if part == "" {
			return nil
		}
		for _, attr := range strings.Split(part, sep) {
			name, raw, ok := strings.Cut(attr, "=")
			if !ok || name == "" {
				return uriError("PKCS#11 URI attribute %q is not NAME=VALUE", attr)
			}
			if seen[name] {
				return uriError("PKCS#11 URI attribute %q appears twice", name)
			}
			seen[name] = true
			if !contains(allowed, name) {
				switch name {
				case "pin-value":
					return uriError("pin-value is refused: a PIN in a URI ends up in configuration files, logs and process listings; use pin-source=file:///PATH or pin-source=env:NAME")
				case "module-name":
					return uriError("module-name is not supported: name the library with module-path=/ABSOLUTE/PATH")
				}
				return uriError("PKCS#11 URI attribute %q is not supported here (supported: %s)", name, strings.Join(allowed, ", "))
			}
			v, err := pctDecode(raw, extra)
			if err != nil {
				return uriError("PKCS#11 URI attribute %s: %v", name, err)
			}
			if err := p.set(name, v); err != nil {
				return err
			}
		}
		return nil
	}
	// RFC 7512: path values may also hold "&"; query values "/", "?" and "|".
	if err := parse(path, ";", pkcs11PathAttrs, "&"); err != nil {
		return nil, err
	}
	if err := parse(query, "&", pkcs11QueryAttrs, "/?|"); err != nil {
		return nil, err
	}
	if p.Object == "" && p.ID == nil {
		return nil, uriError("a PKCS#11 key URI names its key with object=LABEL or id=%%XX..., e.g. pkcs11:token=svc;object=vpec-key")
	}
	return p, nil
}

func (p *PKCS11URI) set(name, v string) error {
	switch name {
	case "token":
		p.Token = v
	case "manufacturer":
		p.Manufacturer = v
	case "model":
		p.Model = v
	case "serial":
		p.Serial = v
	case "slot-id":
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil {
			return uriError("slot-id %q is not a decimal number", v)
		}
		id := uint(n)
		p.SlotID = &id
	case "object":
		p.Object = v
	case "id":
		p.ID = []byte(v)
	case "type":
		if v != "private" {
			return uriError("type=%s: svc signs with private keys; write type=private or leave type out", v)
		}
	case "module-path":
		if !strings.HasPrefix(v, "/") {
			return uriError("module-path %q is not an absolute path", v)
		}
		p.ModulePath = v
	case "pin-source":
		if !strings.HasPrefix(v, "env:") && !strings.HasPrefix(v, "file:") {
			return uriError("pin-source %q: use file:///PATH (the PIN is the file's first line) or env:NAME", v)
		}
		p.PINSource = v
	}
	return nil
}

// String returns the URI in canonical form: attributes in RFC 7512 order,
// values percent-encoded where RFC 7512 requires it.
func (p *PKCS11URI) String() string {
	var path, query []string
	add := func(list *[]string, name, v, extra string) {
		if v != "" {
			*list = append(*list, name+"="+pctEncode(v, extra))
		}
	}
	add(&path, "token", p.Token, "")
	add(&path, "manufacturer", p.Manufacturer, "")
	add(&path, "model", p.Model, "")
	add(&path, "serial", p.Serial, "")
	if p.SlotID != nil {
		path = append(path, "slot-id="+strconv.FormatUint(uint64(*p.SlotID), 10))
	}
	add(&path, "object", p.Object, "")
	if p.ID != nil {
		var b strings.Builder
		for _, c := range p.ID {
			fmt.Fprintf(&b, "%%%02X", c)
		}
		path = append(path, "id="+b.String())
	}
	add(&query, "module-path", p.ModulePath, "/")
	add(&query, "pin-source", p.PINSource, "/")
	out := "pkcs11:" + strings.Join(path, ";")
	if len(query) > 0 {
		out += "?" + strings.Join(query, "&")
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// isUnreserved reports RFC 3986 unreserved characters.
func isUnreserved(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

// p11ResAvail are the reserved characters RFC 7512 lets appear unencoded
// in any attribute value.
const p11ResAvail = ":[]@!$'()*+,="

// pctDecode decodes an attribute value whose unencoded characters must be
// unreserved, in p11ResAvail, or in extra.
func pctDecode(s, extra string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return "", fmt.Errorf("bad percent-encoding at offset %d", i)
			}
			n, _ := strconv.ParseUint(s[i+1:i+3], 16, 8)
			b.WriteByte(byte(n))
			i += 2
		case isUnreserved(c) || strings.IndexByte(p11ResAvail, c) >= 0 || strings.IndexByte(extra, c) >= 0:
			b.WriteByte(c)
		default:
			return "", fmt.Errorf("character %q at offset %d must be percent-encoded", c, i)
		}
	}
	return b.String(), nil
}

// pctEncode encodes every byte that is not unreserved, in p11ResAvail or
// in extra.
func pctEncode(s, extra string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isUnreserved(c) || strings.IndexByte(p11ResAvail, c) >= 0 || strings.IndexByte(extra, c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
