package tlog

import "strings"

// ReceiptPath is where a receipt is stored beside the VPEC at vpecPath:
// a trailing ".json" replaced by ".receipt.json", else ".receipt.json"
// appended (vpec.json → vpec.receipt.json, out/v1 → out/v1.receipt.json).
// svc vpec get and svc close write there; svc-verify reads it with
// --receipt.
func ReceiptPath(vpecPath string) string {
	return strings.TrimSuffix(vpecPath, ".json") + ".receipt.json"
}
