package store

import (
	"context"
	"fmt"
	"time"
)

// VPEC is an issued credential.
type VPEC struct {
	ID       string
	RunID    string
	OrgID    string
	IssuedAt time.Time
	Body     []byte // the VPEC JSON as issued
	// Logged is true once the VPEC's leaf is in the transparency log, at
	// LogIndex (VPECLog.SetVPECLogIndex). Ignored when storing a VPEC.
	Logged   bool
	LogIndex uint64
}

// Belongs reports an error when v names another run or organisation than
// the ones it is being stored for (empty fields are taken as matching).
func (v VPEC) Belongs(orgID, runID string) error {
	if v.RunID != "" && v.RunID != runID {
		return fmt.Errorf("the vpec names run %s", v.RunID)
	}
	if v.OrgID != "" && v.OrgID != orgID {
		return fmt.Errorf("the vpec names org %s", v.OrgID)
	}
	return nil
}

// VPECInfo is what a store knows of an issued VPEC without reading its
// body: callers check the environment and budget the size before they
// load it.
type VPECInfo struct {
	ID       string
	RunID    string
	OrgID    string
	IssuedAt time.Time
	// Size is the length of the VPEC's body in bytes.
	Size int64
	// Environment is the environment of the VPEC's run: "sandbox" or
	// "production".
	Environment string
	// Logged and LogIndex are the VPEC's place in the transparency log,
	// as in VPEC.
	Logged   bool
	LogIndex uint64
}

// VPECReader reads issued VPECs (RunWriter stores them, with the seal).
type VPECReader interface {
	// VPEC returns an issued VPEC of the organisation; ErrNotFound otherwise.
	VPEC(ctx context.Context, orgID, vpecID string) (VPEC, error)
	// VPECInfo returns what VPEC would return but the body, with the
	// body's size and the run's environment, without reading the body;
	// ErrNotFound as VPEC.
	VPECInfo(ctx context.Context, orgID, vpecID string) (VPECInfo, error)
	// VPECsOfOrg lists the organisation's issued VPECs, most recent
	// first (ties by id), at most limit (0 means 100).
	VPECsOfOrg(ctx context.Context, orgID string, limit int) ([]VPEC, error)
}

// VPECLog records where issued VPECs are in the transparency log
// (docs/TRANSPARENCY.md): the close appends a VPEC's leaf after storing the
// VPEC and then records its index; a start appends the VPECs a crash left
// without one.
type VPECLog interface {
	// SetVPECLogIndex records the log index of an issued VPEC of the
	// organisation. The first index recorded stays: setting one again
	// (the same or, after a crash and a second append, another) changes
	// nothing and is not an error. ErrNotFound for an unknown VPEC.
	SetVPECLogIndex(ctx context.Context, orgID, vpecID string, index uint64) error
	// VPECsNotLogged lists issued VPECs of every organisation without a
	// log index, oldest first (ties by id), at most limit (0 means 100).
	VPECsNotLogged(ctx context.Context, limit int) ([]VPEC, error)
}
