package backend

import (
	"crypto/subtle"
	"database/sql"
	"fmt"
	"time"

	"github.com/svc-gov/svc/pkg/service/store"
)

// The columns each Scan function reads, in its order; both schemas name
// them alike.
const (
	OrgCols         = "id, name, tier, created_at"
	APIKeyCols      = "id, org_id, environment, hash, created_at, revoked_at"
	ReviewerKeyCols = "org_id, key_id, public_key, name, created_at"
	RunCols         = `id, org_id, workflow_id, surface_id, policy_pack_id, policy_snapshot_hash, process_context_hash,
	environment, api_key_id, sealed, opened_at, closed_at, vpec_id, close_key,
	record_count, last_sequence, last_chain_hash, record_bytes`
	RecordCols   = "run_id, sequence, record_id, chain_hash, body"
	VPECCols     = "id, run_id, org_id, issued_at, body, log_index"
	ManifestCols = "org_id, id, name, body, created_at"
	ProfileCols  = "id, model_hashes, body, published_at"
	CircuitCols  = "id, circuit, model_hash, body, published_at"
	CalCols      = `id, org_id, model_hash, model_description, hub_model_id, gpu_classes, notify_email, status,
	estimated_completion, profile_id, note, created_at, updated_at`
	SessionCols = `id, org_id, run_id, kind, check_name, manifest_id, reviewer_key_id,
	min_duration_seconds, opened_at, open_tst, closed_at, commitment_hash, close_tst, record_id`
	IdentityCols = "signing_key_id, signing_key, tsa_cert, tsa_root, recorded_at"
)

// ScanOrg reads OrgCols.
func ScanOrg(row Scanner) (store.Org, error) {
	var o store.Org
	err := row.Scan(&o.ID, &o.Name, &o.Tier, At(&o.CreatedAt))
	return o, err
}

// ScanAPIKey reads APIKeyCols.
func ScanAPIKey(row Scanner) (store.APIKey, error) {
	var k store.APIKey
	if err := row.Scan(&k.ID, &k.OrgID, &k.Environment, &k.Hash, At(&k.CreatedAt), At(&k.RevokedAt)); err != nil {
		return store.APIKey{}, err
	}
	return k, nil
}

// ScanReviewerKey reads ReviewerKeyCols.
func ScanReviewerKey(row Scanner) (store.ReviewerKey, error) {
	var k store.ReviewerKey
	err := row.Scan(&k.OrgID, &k.KeyID, &k.PublicKey, &k.Name, At(&k.CreatedAt))
	return k, err
}

// ScanRun reads RunCols.
func ScanRun(row Scanner) (store.Run, error) {
	var r store.Run
	var vpecID sql.NullString
	err := row.Scan(&r.ID, &r.OrgID, &r.WorkflowID, &r.SurfaceID, &r.PolicyPackID, &r.PolicySnapshotHash,
		&r.ProcessContextHash, &r.Environment, &r.APIKeyID, &r.Sealed, At(&r.OpenedAt), At(&r.ClosedAt), &vpecID, &r.CloseKey,
		&r.RecordCount, &r.LastSequence, &r.LastChainHash, &r.RecordBytes)
	if err != nil {
		return store.Run{}, err
	}
	r.VPECID = vpecID.String
	return r, nil
}

// ScanRecord reads RecordCols.
func ScanRecord(row Scanner) (store.Record, error) {
	var r store.Record
	err := row.Scan(&r.RunID, &r.Sequence, &r.RecordID, &r.ChainHash, &r.Body)
	return r, err
}

// ScanVPEC reads VPECCols.
func ScanVPEC(row Scanner) (store.VPEC, error) {
	var v store.VPEC
	err := row.Scan(&v.ID, &v.RunID, &v.OrgID, At(&v.IssuedAt), &v.Body, LogIndex(&v.Logged, &v.LogIndex))
	return v, err
}

// ScanVPECInfo reads a VPEC's id, run_id, org_id, issued_at, the length
// of its body, its run's environment and its log_index.
func ScanVPECInfo(row Scanner) (store.VPECInfo, error) {
	var v store.VPECInfo
	err := row.Scan(&v.ID, &v.RunID, &v.OrgID, At(&v.IssuedAt), &v.Size, &v.Environment, LogIndex(&v.Logged, &v.LogIndex))
	return v, err
}

// ScanManifest reads ManifestCols.
func ScanManifest(row Scanner) (store.Manifest, error) {
	var m store.Manifest
	err := row.Scan(&m.OrgID, &m.ID, &m.Name, &m.Body, At(&m.CreatedAt))
	return m, err
}

// ScanProfile reads ProfileCols, the model hashes into list's
// destination; the list is never nil.
func ScanProfile(row Scanner, list ListDest) (store.Profile, error) {
	var p store.Profile
	if err := row.Scan(&p.ID, list(&p.ModelHashes), &p.Body, At(&p.PublishedAt)); err != nil {
		return store.Profile{}, err
	}
	p.ModelHashes = NonNilList(p.ModelHashes)
	return p, nil
}

// ScanCircuit reads CircuitCols.
func ScanCircuit(row Scanner) (store.Circuit, error) {
	var c store.Circuit
	err := row.Scan(&c.ID, &c.Circuit, &c.ModelHash, &c.Body, At(&c.PublishedAt))
	return c, err
}

// ScanCalibration reads CalCols, the GPU classes into list's destination;
// the list is never nil.
func ScanCalibration(row Scanner, list ListDest) (store.CalibrationRequest, error) {
	var c store.CalibrationRequest
	err := row.Scan(&c.ID, &c.OrgID, &c.ModelHash, &c.ModelDescription, &c.HubModelID, list(&c.GPUClasses), &c.NotifyEmail,
		&c.Status, &c.EstimatedCompletion, &c.ProfileID, &c.Note, At(&c.CreatedAt), At(&c.UpdatedAt))
	if err != nil {
		return store.CalibrationRequest{}, err
	}
	c.GPUClasses = NonNilList(c.GPUClasses)
	return c, nil
}

// ScanSession reads SessionCols.
func ScanSession(row Scanner) (store.Session, error) {
	var s store.Session
	var commitment, record sql.NullString
	err := row.Scan(&s.ID, &s.OrgID, &s.RunID, &s.Kind, &s.Check, &s.ManifestID, &s.ReviewerKeyID,
		&s.MinDurationSeconds, At(&s.OpenedAt), &s.OpenTST, At(&s.ClosedAt), &commitment, &s.CloseTST, &record)
	if err != nil {
		return store.Session{}, err
	}
	s.CommitmentHash, s.RecordID = commitment.String, record.String
	return s, nil
}

// ScanIdentity reads IdentityCols.
func ScanIdentity(row Scanner) (store.Identity, error) {
	var id store.Identity
	err := row.Scan(&id.SigningKeyID, &id.SigningKey, &id.TSACert, &id.TSARoot, At(&id.RecordedAt))
	return id, err
}

// ScanWebSession reads a web session's id_hash, org_id, api_key_id,
// created_at and expires_at, and its API key's revoked_at and
// environment: the session, with an error matching store.ErrRevoked if
// its key was revoked since sign-in.
func ScanWebSession(row Scanner) (store.WebSession, error) {
	var s store.WebSession
	var revoked time.Time
	err := row.Scan(&s.IDHash, &s.OrgID, &s.APIKeyID, At(&s.CreatedAt), At(&s.ExpiresAt), At(&revoked), &s.Environment)
	if err != nil {
		return store.WebSession{}, err
	}
	if !revoked.IsZero() {
		return s, fmt.Errorf("its API key %s: %w", s.APIKeyID, store.ErrRevoked)
	}
	return s, nil
}

// ScanKeyByHash reads APIKeyCols of the key a lookup by hash found:
// store.ErrNotFound unless its hash is hash (compared in constant time),
// and the key with an error matching store.ErrRevoked if it is revoked.
func ScanKeyByHash(row Scanner, hash []byte) (store.APIKey, error) {
	k, err := ScanAPIKey(row)
	switch {
	case err != nil:
		return store.APIKey{}, err
	case subtle.ConstantTimeCompare(k.Hash, hash) != 1:
		return store.APIKey{}, store.ErrNotFound
	case !k.RevokedAt.IsZero():
		return k, fmt.Errorf("api key %s: %w at %s", k.ID, store.ErrRevoked, k.RevokedAt.Format(time.RFC3339Nano))
	}
	return k, nil
}
