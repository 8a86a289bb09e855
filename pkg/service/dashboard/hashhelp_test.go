package dashboard_test

import (
	"html"
	"strings"
	"testing"
)

// TestRegistryFormNamesHashFile: the registry form's help for the model
// hash gives the command that hashes the model file (svc hash --file);
// "svc hash model.onnx" hashes the ten bytes of the name.
func TestRegistryFormNamesHashFile(t *testing.T) {
	e := newEnv(t, envOptions{})
	body := html.UnescapeString(e.get(e.signIn(e.keyA), "/dashboard/registry", 200))
	if !strings.Contains(body, "svc hash --file model.onnx") || strings.Contains(body, "svc hash model.onnx") {
		t.Fatalf("the registry page does not say 'svc hash --file model.onnx':\n%s", body)
	}
}
