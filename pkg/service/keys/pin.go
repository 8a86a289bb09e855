package keys

import (
	"bufio"
	"bytes"
	"fmt"
	"net/url"
	"os"
	"strings"
)

// readPIN resolves a PKCS#11 pin-source: "env:NAME" (through
// Options.Getenv), "file:///PATH" or "file:/PATH" (the file's first line),
// or, without one, Options.PKCS11PIN.
func readPIN(source string, opts Options) (string, error) {
	switch {
	case source == "":
		if opts.PKCS11PIN == "" {
			return "", fmt.Errorf("%w: no PIN: add pin-source=file:///PATH or pin-source=env:NAME to the URI, or configure the PIN", ErrUnreachable)
		}
		return opts.PKCS11PIN, nil
	case strings.HasPrefix(source, "env:"):
		name := strings.TrimPrefix(source, "env:")
		if opts.Getenv == nil {
			return "", fmt.Errorf("%w: pin-source=%s: this program does not read the environment for PINs", ErrUnreachable, source)
		}
		pin := opts.Getenv(name)
		if pin == "" {
			return "", fmt.Errorf("%w: pin-source=%s: environment variable %s is empty or unset", ErrUnreachable, source, name)
		}
		return pin, nil
	default:
		u, err := url.Parse(source)
		if err != nil || u.Scheme != "file" || u.Path == "" || !strings.HasPrefix(u.Path, "/") || (u.Host != "" && u.Host != "localhost") {
			return "", fmt.Errorf("%w: pin-source %q is not file:///ABSOLUTE/PATH", ErrBadURI, source)
		}
		data, err := os.ReadFile(u.Path)
		if err != nil {
			return "", fmt.Errorf("%w: pin-source: %w", ErrUnreachable, err)
		}
		line, _, _ := bufio.NewReader(bytes.NewReader(data)).ReadLine()
		pin := strings.TrimRight(string(line), "\r")
		if pin == "" {
			return "", fmt.Errorf("%w: pin-source: %s is empty", ErrUnreachable, u.Path)
		}
		return pin, nil
	}
}
