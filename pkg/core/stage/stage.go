// Package stage names the parts of a governance check that the boundary
// rule decomposes into several VPEC records (docs/FORMATS.md, "Records"
// and "Condition records of a decomposition"): the values of a record's
// stage_type and stage_part, and the members of its details that tie the
// records of one decomposition together. The client writes them
// (pkg/client/bounded), the VPEC schema accepts exactly these values
// (pkg/core/vpec), and the verifier's evidence and ZK proofs checks follow
// the links (pkg/core/verify).
package stage

// Stage types: the value of a record's stage_type.
const (
	BoundCommittedInference = "bound_committed_inference"
	OpenSourceML            = "open_source_ml"
	// MLPHead is the inference of an MLP classifier head recorded at
	// execution level because no circuit is published for it (the
	// verifiable_inference fallback); it raises a circuit_missing gap.
	MLPHead = "mlp_head"
)

// Stage parts: the value of a record's stage_part.
const (
	PartPre       = "pre_conditions"
	PartInference = "inference"
	PartPost      = "post_conditions"
)

// Details members of the records of a decomposition.
const (
	// DetailGPUClass is the details key under which the inference record
	// of a classifier check names the GPU class it ran on (an
	// open_source_ml record has no bounded_inference block to say it): a
	// profile that covers the model but not that class does not resolve
	// its model_profile_missing gap.
	DetailGPUClass = "gpu_class"
	// DetailInputCommitment names, in a proved condition record, the
	// commitment of the check's input (the text): the commitment_hash of
	// the check's inference record. The condition's own commitment_hash is
	// the salted poseidon2 commitment of its value (the proof's public
	// input), which says nothing about the text by itself.
	DetailInputCommitment = "input_commitment"
	// DetailThreshold is the float threshold of a threshold condition;
	// zk_proof.threshold must be its quantisation.
	DetailThreshold = "threshold"
	// DetailMaxTokens is the model's maximum token count of a truncation
	// condition; zk_proof.max_tokens must equal it.
	DetailMaxTokens = "max_tokens"
	// DetailConditionCommitments names, in the inference record of a
	// decomposition, the commitment_hash of each of its proved conditions
	// by part ("truncation_check", "threshold_check"): the link back.
	DetailConditionCommitments = "condition_commitments"
)
