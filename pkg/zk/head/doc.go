// Package head is the mlp_head circuit: the proof that a small quantised
// MLP classification head (the verifiable_inference level) produced the
// class and logits a record claims from the input its Poseidon2
// commitment names (docs/PROOFS.md, "The head circuit").
//
// It reads an ONNX MLP head ([LoadONNX]),
// quantises it exactly to int8 ([Quantized], scheme [QuantVersion]),
// compiles it to an R1CS constraint system ([Compile]), and proves and
// verifies runs with BN254 Groth16 ([Prove], [Verify]). The byte
// encodings, circuit ids and the verifier are pkg/zk/zkverify's; the
// errors of verification are the same values.
//
// The package does not configure gnark's logger: a program that compiles
// or proves and wants gnark's debug lines off calls
// logger.Disable (github.com/consensys/gnark/logger) itself, as svc does
// (pkg/app/cli/clicore.Run).
package head
