package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/notify"
	"github.com/svc-gov/svc/pkg/service/store"
)

// Calibration request statuses. queued -> in_progress -> published, and
// queued or in_progress -> rejected; published and rejected are final.
const (
	CalQueued     = "queued"
	CalInProgress = "in_progress"
	CalPublished  = "published"
	CalRejected   = "rejected"
)

// Estimated calibration turnaround per tier (docs/API.md).
var turnaround = map[string]string{TierStandard: "7d", TierEnterprise: "48h"}

func calView(c store.CalibrationRequest) api.CalibrationRequestView {
	return api.CalibrationRequestView{RequestID: c.ID, Status: c.Status, EstimatedCompletion: c.EstimatedCompletion,
		NotifyEmail: c.NotifyEmail, ONNXModelHash: c.ModelHash, HubModelID: c.HubModelID, DesiredGPUClasses: c.GPUClasses,
		ProfileID: c.ProfileID, Note: c.Note, CreatedAt: vpec.FormatTime(c.CreatedAt), UpdatedAt: vpec.FormatTime(c.UpdatedAt)}
}

func validEmail(e string) bool {
	at := strings.LastIndexByte(e, '@')
	return len(e) <= 254 && at > 0 && at < len(e)-1 && !strings.ContainsAny(e, " \r\n<>,;")
}

func (s *Server) requestCalibration(w http.ResponseWriter, r *http.Request) {
	var in api.CalibrationRequestInput
	if _, err := s.decode(r, &in); err != nil {
		s.fail(w, r, err)
		return
	}
	v, err := s.createCalibrationRequest(r.Context(), caller(r), in)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, v)
}

// createCalibrationRequest validates a calibration request of the key's
// organisation and stores it: the API's POST and the dashboard's form
// both come here. Validation errors are *httpError (400).
func (s *Server) createCalibrationRequest(ctx context.Context, key store.APIKey, in api.CalibrationRequestInput) (api.CalibrationRequestView, error) {
	if _, err := commitment.ParseSHA256(in.ONNXModelHash); err != nil {
		return api.CalibrationRequestView{}, badRequest("onnx_model_hash", "onnx_model_hash must be sha256:<64 hex> of the ONNX model file: %v", err)
	}
	if len(in.DesiredGPUClasses) == 0 {
		in.DesiredGPUClasses = []string{"cpu"}
	}
	for _, g := range in.DesiredGPUClasses {
		if !profile.ValidGPUClass(g) {
			return api.CalibrationRequestView{}, badRequest("desired_gpu_classes", "GPU class %q is not one of %v", g, profile.GPUClasses())
		}
	}
	if in.NotifyEmail != "" && !validEmail(in.NotifyEmail) {
		return api.CalibrationRequestView{}, badRequest("notify_email", "notify_email %q is not an e-mail address", in.NotifyEmail)
	}
	if len(in.ModelDescription) > 4096 || len(in.HubModelID) > 256 {
		return api.CalibrationRequestView{}, badRequest("model_description", "model_description is limited to 4096 bytes and hub_model_id to 256")
	}
	org, err := s.cfg.Storage.Orgs.OrgByID(ctx, key.OrgID)
	if err != nil {
		return api.CalibrationRequestView{}, err
	}
	now := s.cfg.Now().UTC().Truncate(time.Microsecond)
	c := store.CalibrationRequest{ID: names.NewID("cal_req_"), OrgID: org.ID, ModelHash: in.ONNXModelHash,
		ModelDescription: in.ModelDescription, HubModelID: in.HubModelID, GPUClasses: in.DesiredGPUClasses,
		NotifyEmail: in.NotifyEmail, Status: CalQueued, EstimatedCompletion: turnaround[org.Tier], CreatedAt: now, UpdatedAt: now}
	if c.EstimatedCompletion == "" {
		c.EstimatedCompletion = turnaround[TierStandard]
	}
	if err := s.cfg.Storage.Calibrations.CreateCalibrationRequest(ctx, c); err != nil {
		return api.CalibrationRequestView{}, err
	}
	s.metrics.CalibrationRequest(c.Status)
	return calView(c), nil
}

func (s *Server) getCalibrationRequest(w http.ResponseWriter, r *http.Request) {
	c, err := s.cfg.Storage.Calibrations.CalibrationRequest(r.Context(), caller(r).OrgID, r.PathValue("request_id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, calView(c))
}

// ErrTransition reports a calibration status change that is not allowed.
var ErrTransition = errors.New("status change not allowed")

// SetCalibrationStatus moves a request to in_progress or rejected (with a
// note saying why). Published requests are set by Publish only.
func SetCalibrationStatus(ctx context.Context, st store.CalibrationStore, orgID, id, status, note string, now time.Time) (store.CalibrationRequest, error) {
	c, err := st.CalibrationRequest(ctx, orgID, id)
	if err != nil {
		return c, fmt.Errorf("calibration request %s: %w", id, err)
	}
	from := map[string][]string{CalInProgress: {CalQueued}, CalRejected: {CalQueued, CalInProgress}}[status]
	if !slices.Contains(from, c.Status) {
		return c, fmt.Errorf("%w: %s -> %s (allowed: queued -> in_progress, queued|in_progress -> rejected)", ErrTransition, c.Status, status)
	}
	// Conditional on the status just read: a concurrent publication wins.
	if err := st.UpdateCalibrationRequest(ctx, id, from, status, "", note, now.UTC()); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return c, fmt.Errorf("%w: the request changed status meanwhile; look again", ErrTransition)
		}
		return c, err
	}
	return st.CalibrationRequest(ctx, orgID, id)
}

// PublishResult says what publishing a profile did.
type PublishResult struct {
	ProfileID         string   `json:"profile_id"`
	Models            []string `json:"models"`
	RequestsPublished []string `json:"requests_published"`
	// RequestsPartial are requests the profile covers only some GPU classes
	// of: they stay in_progress, their note naming the classes still to
	// calibrate.
	RequestsPartial []PartialRequest `json:"requests_partial,omitempty"`
	NoticesSent     int              `json:"notices_sent"`
	NoticeErrors    []string         `json:"notice_errors,omitempty"`
	// NoticesNotSent are requesters not told because no mailer was given.
	NoticesNotSent []string `json:"notices_not_sent,omitempty"`
}

// PartialRequest is a calibration request a profile covers in part.
type PartialRequest struct {
	RequestID string   `json:"request_id"`
	Covered   []string `json:"covered_gpu_classes"`
	Missing   []string `json:"missing_gpu_classes"`
}

// PublishStore is what Publish uses: the profile registry, and the
// calibration requests a publication answers.
type PublishStore interface {
	store.ProfileStore
	store.CalibrationStore
}

// Publish signs a calibrated profile with the service key and publishes it:
// lookups for its models find it from now on, so model_profile_missing no
// longer arises for them; every open calibration request for its models
// (any organisation) becomes published, and its requester gets an e-mail
// through mailer (a nil mailer skips e-mail; failures are reported, not fatal).
func Publish(ctx context.Context, st PublishStore, signer *signing.Signer, signedBy string, p *profile.Profile, mailer *notify.Mailer, now time.Time) (*PublishResult, error) {
	body, err := profile.SignedDocument(p, signer, signedBy)
	if err != nil {
		return nil, err
	}
	res := &PublishResult{ProfileID: p.ProfileID, RequestsPublished: []string{}}
	for _, m := range p.Models {
		res.Models = append(res.Models, m.ONNXModelHash)
	}
	now = now.UTC().Truncate(time.Microsecond)
	if err := st.PutProfile(ctx, store.Profile{ID: p.ProfileID, ModelHashes: res.Models, Body: body, PublishedAt: now}); err != nil {
		// Publishing the identical profile again finishes an interrupted
		// publication (requests and notices); anything else under the same
		// id is refused: profiles are immutable.
		old, gerr := st.ProfileByID(ctx, p.ProfileID)
		if !errors.Is(err, store.ErrExists) || gerr != nil || !bytes.Equal(old.Body, body) {
			return nil, fmt.Errorf("publish %s: %w", p.ProfileID, err)
		}
	}
	for _, h := range res.Models {
		reqs, err := st.CalibrationRequestsByModel(ctx, h)
		if err != nil {
			return res, err
		}
		for _, c := range reqs {
			if c.Status == CalPublished || c.Status == CalRejected {
				continue
			}
			// A request is published only when the profile covers every
			// GPU class it asked for; otherwise it stays in progress,
			// saying which classes are covered and which are not.
			var covered, missing []string
			for _, g := range c.GPUClasses {
				if p.CoversGPU(g) {
					covered = append(covered, g)
				} else {
					missing = append(missing, g)
				}
			}
			status, note, what := CalPublished, "", "is complete"
			if len(missing) > 0 {
				status = CalInProgress
				note = fmt.Sprintf("profile %s covers %s; still to calibrate: %s", p.ProfileID, strings.Join(covered, ", "), strings.Join(missing, ", "))
				what = "is partly complete: " + note
				if len(covered) == 0 {
					continue // nothing of this request is covered
				}
			}
			err := st.UpdateCalibrationRequest(ctx, c.ID, []string{CalQueued, CalInProgress}, status, p.ProfileID, note, now)
			if errors.Is(err, store.ErrConflict) {
				continue // rejected or published meanwhile
			}
			if err != nil {
				return res, err
			}
			if len(missing) > 0 {
				res.RequestsPartial = append(res.RequestsPartial, PartialRequest{RequestID: c.ID, Covered: covered, Missing: missing})
			} else {
				res.RequestsPublished = append(res.RequestsPublished, c.ID)
			}
			if c.NotifyEmail == "" {
				continue
			}
			if mailer == nil {
				res.NoticesNotSent = append(res.NoticesNotSent, c.ID+" ("+c.NotifyEmail+")")
				continue
			}
			err = mailer.Send(ctx, notify.Message{
				To:      c.NotifyEmail,
				Subject: "svc: drift profile published for your model (" + p.ProfileID + ")",
				Body: fmt.Sprintf("Your calibration request %s %s.\n\nProfile: %s\nModel: %s\nGPU classes: %s\nCalibration passes: %d, safety margin %gx\n\n"+
					"Checks on this model on those GPU classes now run at the Bounded Inference level\n(operator_bound) and no longer raise model_profile_missing.\n",
					c.ID, what, p.ProfileID, h, strings.Join(p.CalibratedGPUClasses, ", "), p.CalibrationPasses, p.SafetyMargin),
			})
			if err != nil {
				res.NoticeErrors = append(res.NoticeErrors, fmt.Sprintf("%s: %v", c.ID, err))
				continue
			}
			res.NoticesSent++
		}
	}
	return res, nil
}
