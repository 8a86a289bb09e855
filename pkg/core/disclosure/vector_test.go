package disclosure

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// vectorInput and vectorSalts are the worked example of docs/FORMATS.md
// ("Selective disclosure: worked example"): member k gets the salt of the
// 16 bytes 16k, 16k+1, ..., 16k+15.
const vectorInput = `{"document_type": "passport", "jurisdiction": "FR", "holder": {"name": "Alice Example", "born": 1990}, "score": 0.50}`

var vectorDeclared = []string{"document_type", "jurisdiction"}

func vectorSalts() func() (string, error) {
	k := 0
	return func() (string, error) {
		b := make([]byte, 16)
		for i := range b {
			b[i] = byte(16*k + i)
		}
		k++
		return base64.RawURLEncoding.EncodeToString(b), nil
	}
}

// Expected values, also printed in docs/FORMATS.md.
var vectorWant = []string{
	// salts, in member order
	"AAECAwQFBgcICQoLDA0ODw", "EBESExQVFhcYGRobHB0eHw", "ICEiIyQlJicoKSorLC0uLw", "MDEyMzQ1Njc4OTo7PD0-Pw",
	// the hashed bytes of the first disclosure
	`["AAECAwQFBgcICQoLDA0ODw","document_type","passport"]`,
	// the undisclosed nested member, canonical
	`["ICEiIyQlJicoKSorLC0uLw","holder",{"born":1990,"name":"Alice Example"}]`,
	`["MDEyMzQ1Njc4OTo7PD0-Pw","score",0.5]`,
}

func TestWorkedVector(t *testing.T) {
	s, err := splitInput([]byte(vectorInput), vectorDeclared, vectorSalts())
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for i, d := range s.All {
		b, _ := json.Marshal([]any{d.Salt, d.Field, d.Value})
		dg, err := d.Digest()
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b)+" "+dg)
		if i < len(vectorWant)-3 && d.Salt != vectorWant[i] {
			t.Errorf("salt %d = %s, want %s", i, d.Salt, vectorWant[i])
		}
	}
	t.Logf("disclosures:\n%s\ndigests %v\ncommitment %s", strings.Join(lines, "\n"), s.Digests, s.Commitment)
	if len(s.Disclosed) != 2 || s.Disclosed[0].Field != "document_type" || s.Disclosed[1].Field != "jurisdiction" {
		t.Fatalf("disclosed %v", s.Disclosed)
	}
	doc, err := os.ReadFile("../../../docs/FORMATS.md")
	if err != nil {
		t.Fatal(err)
	}
	want := append([]string{s.Commitment}, s.Digests...)
	want = append(want, vectorWant...)
	for _, w := range want {
		if !strings.Contains(string(doc), w) {
			t.Errorf("docs/FORMATS.md does not hold %s", w)
		}
	}
	if err := CheckSelective(s.Commitment, s.Digests, s.Disclosed, vectorDeclared); err != nil {
		t.Fatal(err)
	}
}
