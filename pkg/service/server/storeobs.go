// The store instrumentation: every method of every role observed alike
// (latency, errors, a span), one wrapper type per role. A method a role
// gains later passes through the embedded role unobserved until it is
// added here.

package server

import (
	"context"
	"time"

	"github.com/svc-gov/svc/pkg/service/store"
)

// instrument wraps every role of st with the store latency and error
// metrics and a span per operation; nil roles stay nil.
func (o storeObserver) instrument(st Storage) Storage {
	if st.Health != nil {
		st.Health = obsPinger{o, st.Health}
	}
	if st.Orgs != nil {
		st.Orgs = obsOrgs{o, st.Orgs}
	}
	if st.Runs != nil {
		st.Runs = obsRuns{o, st.Runs}
	}
	if st.VPECs != nil {
		st.VPECs = obsVPECs{o, st.VPECs}
	}
	if st.Manifests != nil {
		st.Manifests = obsManifests{o, st.Manifests}
	}
	if st.Profiles != nil {
		st.Profiles = obsProfiles{o, st.Profiles}
	}
	if st.Calibrations != nil {
		st.Calibrations = obsCalibrations{o, st.Calibrations}
	}
	if st.Sessions != nil {
		st.Sessions = obsSessions{o, st.Sessions}
	}
	if st.Circuits != nil {
		st.Circuits = obsCircuits{o, st.Circuits}
	}
	if st.WebSessions != nil {
		st.WebSessions = obsWebSessions{o, st.WebSessions}
	}
	return st
}

type obsPinger struct {
	storeObserver
	store.Pinger
}

func (w obsPinger) Ping(ctx context.Context) error {
	ctx, done := w.start(ctx, "Ping")
	err := w.Pinger.Ping(ctx)
	done(err)
	return err
}

type obsOrgs struct {
	storeObserver
	store.OrgStore
}

func (w obsOrgs) OrgByName(ctx context.Context, name string) (store.Org, error) {
	ctx, done := w.start(ctx, "OrgByName")
	r0, err := w.OrgStore.OrgByName(ctx, name)
	done(err)
	return r0, err
}

func (w obsOrgs) OrgByID(ctx context.Context, id string) (store.Org, error) {
	ctx, done := w.start(ctx, "OrgByID")
	r0, err := w.OrgStore.OrgByID(ctx, id)
	done(err)
	return r0, err
}

func (w obsOrgs) APIKeyByHash(ctx context.Context, hash []byte) (store.APIKey, error) {
	ctx, done := w.start(ctx, "APIKeyByHash")
	r0, err := w.OrgStore.APIKeyByHash(ctx, hash)
	done(err)
	return r0, err
}

func (w obsOrgs) APIKeys(ctx context.Context, orgID string) ([]store.APIKey, error) {
	ctx, done := w.start(ctx, "APIKeys")
	r0, err := w.OrgStore.APIKeys(ctx, orgID)
	done(err)
	return r0, err
}

func (w obsOrgs) ReviewerKey(ctx context.Context, orgID, keyID string) (store.ReviewerKey, error) {
	ctx, done := w.start(ctx, "ReviewerKey")
	r0, err := w.OrgStore.ReviewerKey(ctx, orgID, keyID)
	done(err)
	return r0, err
}

func (w obsOrgs) CreateOrg(ctx context.Context, o store.Org) error {
	ctx, done := w.start(ctx, "CreateOrg")
	err := w.OrgStore.CreateOrg(ctx, o)
	done(err)
	return err
}

func (w obsOrgs) CreateAPIKey(ctx context.Context, k store.APIKey) error {
	ctx, done := w.start(ctx, "CreateAPIKey")
	err := w.OrgStore.CreateAPIKey(ctx, k)
	done(err)
	return err
}

func (w obsOrgs) RevokeAPIKey(ctx context.Context, id string, at time.Time) (store.APIKey, error) {
	ctx, done := w.start(ctx, "RevokeAPIKey")
	r0, err := w.OrgStore.RevokeAPIKey(ctx, id, at)
	done(err)
	return r0, err
}

func (w obsOrgs) CreateReviewerKey(ctx context.Context, k store.ReviewerKey) error {
	ctx, done := w.start(ctx, "CreateReviewerKey")
	err := w.OrgStore.CreateReviewerKey(ctx, k)
	done(err)
	return err
}

type obsRuns struct {
	storeObserver
	store.RunStore
}

func (w obsRuns) Run(ctx context.Context, orgID, runID string) (store.Run, error) {
	ctx, done := w.start(ctx, "Run")
	r0, err := w.RunStore.Run(ctx, orgID, runID)
	done(err)
	return r0, err
}

func (w obsRuns) RunsOfOrg(ctx context.Context, orgID string, f store.RunFilter) ([]store.Run, error) {
	ctx, done := w.start(ctx, "RunsOfOrg")
	r0, err := w.RunStore.RunsOfOrg(ctx, orgID, f)
	done(err)
	return r0, err
}

func (w obsRuns) RecordBySequence(ctx context.Context, runID string, seq int64) (store.Record, error) {
	ctx, done := w.start(ctx, "RecordBySequence")
	r0, err := w.RunStore.RecordBySequence(ctx, runID, seq)
	done(err)
	return r0, err
}

func (w obsRuns) Records(ctx context.Context, runID string) ([]store.Record, error) {
	ctx, done := w.start(ctx, "Records")
	r0, err := w.RunStore.Records(ctx, runID)
	done(err)
	return r0, err
}

func (w obsRuns) EachRecord(ctx context.Context, runID string, fn func(store.Record) error) error {
	ctx, done := w.start(ctx, "EachRecord")
	err := w.RunStore.EachRecord(ctx, runID, fn)
	done(err)
	return err
}

func (w obsRuns) EachRecordBody(ctx context.Context, runID string, fn func(seq int64, body []byte) error) error {
	ctx, done := w.start(ctx, "EachRecordBody")
	err := w.RunStore.EachRecordBody(ctx, runID, fn)
	done(err)
	return err
}

func (w obsRuns) CreateRun(ctx context.Context, r store.Run) error {
	ctx, done := w.start(ctx, "CreateRun")
	err := w.RunStore.CreateRun(ctx, r)
	done(err)
	return err
}

func (w obsRuns) AppendRecord(ctx context.Context, orgID string, rec store.Record, lim store.Limits) (bool, error) {
	ctx, done := w.start(ctx, "AppendRecord")
	r0, err := w.RunStore.AppendRecord(ctx, orgID, rec, lim)
	done(err)
	return r0, err
}

func (w obsRuns) AppendRecords(ctx context.Context, orgID string, recs []store.Record, lim store.Limits) ([]bool, error) {
	ctx, done := w.start(ctx, "AppendRecords")
	r0, err := w.RunStore.AppendRecords(ctx, orgID, recs, lim)
	done(err)
	return r0, err
}

func (w obsRuns) SealRecords(ctx context.Context, orgID, runID, closeKey string, closedAt time.Time) (store.Run, bool, error) {
	ctx, done := w.start(ctx, "SealRecords")
	r0, r1, err := w.RunStore.SealRecords(ctx, orgID, runID, closeKey, closedAt)
	done(err)
	return r0, r1, err
}

func (w obsRuns) StoreVPEC(ctx context.Context, orgID, runID string, v store.VPEC) error {
	ctx, done := w.start(ctx, "StoreVPEC")
	err := w.RunStore.StoreVPEC(ctx, orgID, runID, v)
	done(err)
	return err
}

func (w obsRuns) UnsealRecords(ctx context.Context, orgID, runID, closeKey string) error {
	ctx, done := w.start(ctx, "UnsealRecords")
	err := w.RunStore.UnsealRecords(ctx, orgID, runID, closeKey)
	done(err)
	return err
}

func (w obsRuns) SealRun(ctx context.Context, orgID, runID string, v store.VPEC) error {
	ctx, done := w.start(ctx, "SealRun")
	err := w.RunStore.SealRun(ctx, orgID, runID, v)
	done(err)
	return err
}

type obsVPECs struct {
	storeObserver
	store.VPECReader
}

func (w obsVPECs) VPEC(ctx context.Context, orgID, vpecID string) (store.VPEC, error) {
	ctx, done := w.start(ctx, "VPEC")
	r0, err := w.VPECReader.VPEC(ctx, orgID, vpecID)
	done(err)
	return r0, err
}

func (w obsVPECs) VPECInfo(ctx context.Context, orgID, vpecID string) (store.VPECInfo, error) {
	ctx, done := w.start(ctx, "VPECInfo")
	r0, err := w.VPECReader.VPECInfo(ctx, orgID, vpecID)
	done(err)
	return r0, err
}

func (w obsVPECs) VPECsOfOrg(ctx context.Context, orgID string, limit int) ([]store.VPEC, error) {
	ctx, done := w.start(ctx, "VPECsOfOrg")
	r0, err := w.VPECReader.VPECsOfOrg(ctx, orgID, limit)
	done(err)
	return r0, err
}

type obsManifests struct {
	storeObserver
	store.ManifestStore
}

func (w obsManifests) Manifest(ctx context.Context, orgID, id string) (store.Manifest, error) {
	ctx, done := w.start(ctx, "Manifest")
	r0, err := w.ManifestStore.Manifest(ctx, orgID, id)
	done(err)
	return r0, err
}

func (w obsManifests) ManifestsOfOrg(ctx context.Context, orgID string) ([]store.Manifest, error) {
	ctx, done := w.start(ctx, "ManifestsOfOrg")
	r0, err := w.ManifestStore.ManifestsOfOrg(ctx, orgID)
	done(err)
	return r0, err
}

func (w obsManifests) PutManifest(ctx context.Context, m store.Manifest) (bool, error) {
	ctx, done := w.start(ctx, "PutManifest")
	r0, err := w.ManifestStore.PutManifest(ctx, m)
	done(err)
	return r0, err
}

type obsProfiles struct {
	storeObserver
	store.ProfileReader
}

func (w obsProfiles) Profiles(ctx context.Context) ([]store.Profile, error) {
	ctx, done := w.start(ctx, "Profiles")
	r0, err := w.ProfileReader.Profiles(ctx)
	done(err)
	return r0, err
}

func (w obsProfiles) ProfileByID(ctx context.Context, id string) (store.Profile, error) {
	ctx, done := w.start(ctx, "ProfileByID")
	r0, err := w.ProfileReader.ProfileByID(ctx, id)
	done(err)
	return r0, err
}

func (w obsProfiles) ProfileByModelHash(ctx context.Context, modelHash string) (store.Profile, error) {
	ctx, done := w.start(ctx, "ProfileByModelHash")
	r0, err := w.ProfileReader.ProfileByModelHash(ctx, modelHash)
	done(err)
	return r0, err
}

type obsCalibrations struct {
	storeObserver
	store.CalibrationStore
}

func (w obsCalibrations) CalibrationRequest(ctx context.Context, orgID, id string) (store.CalibrationRequest, error) {
	ctx, done := w.start(ctx, "CalibrationRequest")
	r0, err := w.CalibrationStore.CalibrationRequest(ctx, orgID, id)
	done(err)
	return r0, err
}

func (w obsCalibrations) CalibrationRequestsOfOrg(ctx context.Context, orgID string) ([]store.CalibrationRequest, error) {
	ctx, done := w.start(ctx, "CalibrationRequestsOfOrg")
	r0, err := w.CalibrationStore.CalibrationRequestsOfOrg(ctx, orgID)
	done(err)
	return r0, err
}

func (w obsCalibrations) CalibrationRequestsByModel(ctx context.Context, modelHash string) ([]store.CalibrationRequest, error) {
	ctx, done := w.start(ctx, "CalibrationRequestsByModel")
	r0, err := w.CalibrationStore.CalibrationRequestsByModel(ctx, modelHash)
	done(err)
	return r0, err
}

func (w obsCalibrations) CreateCalibrationRequest(ctx context.Context, r store.CalibrationRequest) error {
	ctx, done := w.start(ctx, "CreateCalibrationRequest")
	err := w.CalibrationStore.CreateCalibrationRequest(ctx, r)
	done(err)
	return err
}

func (w obsCalibrations) UpdateCalibrationRequest(ctx context.Context, id string, from []string, status, profileID, note string, at time.Time) error {
	ctx, done := w.start(ctx, "UpdateCalibrationRequest")
	err := w.CalibrationStore.UpdateCalibrationRequest(ctx, id, from, status, profileID, note, at)
	done(err)
	return err
}

type obsSessions struct {
	storeObserver
	store.SessionStore
}

func (w obsSessions) CreateSession(ctx context.Context, s store.Session) error {
	ctx, done := w.start(ctx, "CreateSession")
	err := w.SessionStore.CreateSession(ctx, s)
	done(err)
	return err
}

func (w obsSessions) Session(ctx context.Context, orgID, id string) (store.Session, error) {
	ctx, done := w.start(ctx, "Session")
	r0, err := w.SessionStore.Session(ctx, orgID, id)
	done(err)
	return r0, err
}

func (w obsSessions) CloseSession(ctx context.Context, orgID, id string, closedAt time.Time, commitmentHash string, closeTST []byte) error {
	ctx, done := w.start(ctx, "CloseSession")
	err := w.SessionStore.CloseSession(ctx, orgID, id, closedAt, commitmentHash, closeTST)
	done(err)
	return err
}

func (w obsSessions) ClaimSession(ctx context.Context, orgID, id, recordID string) error {
	ctx, done := w.start(ctx, "ClaimSession")
	err := w.SessionStore.ClaimSession(ctx, orgID, id, recordID)
	done(err)
	return err
}

type obsCircuits struct {
	storeObserver
	store.CircuitReader
}

func (w obsCircuits) CircuitByID(ctx context.Context, id string) (store.Circuit, error) {
	ctx, done := w.start(ctx, "CircuitByID")
	r0, err := w.CircuitReader.CircuitByID(ctx, id)
	done(err)
	return r0, err
}

func (w obsCircuits) CircuitByModelHash(ctx context.Context, modelHash string) (store.Circuit, error) {
	ctx, done := w.start(ctx, "CircuitByModelHash")
	r0, err := w.CircuitReader.CircuitByModelHash(ctx, modelHash)
	done(err)
	return r0, err
}

type obsWebSessions struct {
	storeObserver
	store.WebSessionStore
}

func (w obsWebSessions) CreateWebSession(ctx context.Context, s store.WebSession) error {
	ctx, done := w.start(ctx, "CreateWebSession")
	err := w.WebSessionStore.CreateWebSession(ctx, s)
	done(err)
	return err
}

func (w obsWebSessions) WebSession(ctx context.Context, idHash []byte, now time.Time) (store.WebSession, error) {
	ctx, done := w.start(ctx, "WebSession")
	r0, err := w.WebSessionStore.WebSession(ctx, idHash, now)
	done(err)
	return r0, err
}

func (w obsWebSessions) DeleteWebSession(ctx context.Context, idHash []byte) error {
	ctx, done := w.start(ctx, "DeleteWebSession")
	err := w.WebSessionStore.DeleteWebSession(ctx, idHash)
	done(err)
	return err
}

func (w obsWebSessions) DeleteExpiredWebSessions(ctx context.Context, now time.Time) (int64, error) {
	ctx, done := w.start(ctx, "DeleteExpiredWebSessions")
	r0, err := w.WebSessionStore.DeleteExpiredWebSessions(ctx, now)
	done(err)
	return r0, err
}
