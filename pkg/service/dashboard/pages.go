package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/svc-gov/svc/internal/httpbody"
	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/core/sigstore"
	"github.com/svc-gov/svc/pkg/core/trustroot"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/zk/zkverify"
)

var funcs = template.FuncMap{
	"time": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04 UTC")
	},
	"short": func(h string) string {
		if len(h) > 23 {
			return h[:23] + "…"
		}
		return h
	},
	"join": strings.Join,
	"path": url.PathEscape,
	"has": func(list []string, s string) bool {
		return strings.Contains(","+strings.Join(list, ",")+",", ","+s+",")
	},
	"mark":   mark,
	"status": func(s verify.Status) string { return string(s) },
}

func mark(s verify.Status) string {
	switch s {
	case verify.Pass:
		return "✔ pass"
	case verify.Fail:
		return "✖ FAIL"
	case verify.Warn:
		return "! warn"
	}
	return "– n/a"
}

// render executes a page into a buffer first, so a template error is a
// clean 500 rather than half a page.
func (d *Dashboard) render(w http.ResponseWriter, r *http.Request, status int, page string, data map[string]any) {
	if s, ok := r.Context().Value(ctxKey{}).(sess); ok {
		data["Session"] = s
		data["CSRF"] = csrfToken(s.token, csrfPurposeSession)
	}
	data["Version"] = d.cfg.Version
	data["Page"] = page
	var buf bytes.Buffer
	if err := d.pages[page].ExecuteTemplate(&buf, "layout", data); err != nil {
		d.log.ErrorContext(r.Context(), "dashboard: render", "page", page, "error", err.Error())
		http.Error(w, "internal error rendering the page; the service log has the details", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

func (d *Dashboard) errorPage(w http.ResponseWriter, r *http.Request, status int, msg string) {
	d.render(w, r, status, "error", map[string]any{"Title": http.StatusText(status), "Message": msg, "Status": status})
}

func (d *Dashboard) serverError(w http.ResponseWriter, r *http.Request, err error) {
	d.log.ErrorContext(r.Context(), "dashboard: request failed", "path", r.URL.Path, "error", err.Error())
	d.errorPage(w, r, http.StatusInternalServerError, "Internal error; the service log has the details.")
}

func (d *Dashboard) notFound(w http.ResponseWriter, r *http.Request, what string) {
	d.errorPage(w, r, http.StatusNotFound, what+" not found in your organisation.")
}

// --- registry and calibration requests -------------------------------------------------

// registry shows the registry page. Its ?requested= names a calibration
// request just filed: the page shows it only when it is a request of the
// session's organisation, so a link cannot make the page show other text
// (content spoofing). There is no ?problem=: a form problem is shown in
// the answer to the post (registryPage).
func (d *Dashboard) registry(w http.ResponseWriter, r *http.Request) {
	requested := r.URL.Query().Get("requested")
	if requested != "" {
		if _, err := d.cfg.Storage.Calibrations.CalibrationRequest(r.Context(), current(r).OrgID, requested); err != nil {
			if !errors.Is(err, store.ErrNotFound) {
				d.serverError(w, r, err)
				return
			}
			requested = ""
		}
	}
	d.registryPage(w, r, http.StatusOK, requested, "")
}

// registryPage renders the registry page with a request id just filed or
// a problem of the calibration request form.
func (d *Dashboard) registryPage(w http.ResponseWriter, r *http.Request, status int, requested, problem string) {
	s := current(r)
	models, scan, err := Models(r.Context(), d.cfg.Storage, s.OrgID, s.Environment, d.cfg.ScanBytes)
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	counts := map[string]int{}
	for _, m := range models {
		counts[m.Status]++
	}
	d.render(w, r, status, "registry", map[string]any{
		"Title": "Model registry", "Models": models, "Counts": counts, "GPUClasses": profile.GPUClasses(),
		"Requested": requested, "Problem": problem, "Scan": scan,
	})
}

func (d *Dashboard) requestCalibration(w http.ResponseWriter, r *http.Request) {
	s := current(r)
	if err := r.ParseForm(); err != nil {
		d.errorPage(w, r, http.StatusBadRequest, "The form could not be read: "+err.Error())
		return
	}
	in := api.CalibrationRequestInput{
		ONNXModelHash: strings.TrimSpace(r.PostForm.Get("onnx_model_hash")),
		HubModelID:    strings.TrimSpace(r.PostForm.Get("hub_model_id")),
		NotifyEmail:   strings.TrimSpace(r.PostForm.Get("notify_email")),
	}
	in.DesiredGPUClasses = r.PostForm["gpu_class"]
	keys, err := d.cfg.Storage.Orgs.APIKeys(r.Context(), s.OrgID)
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	var key store.APIKey
	for _, k := range keys {
		if k.ID == s.APIKeyID {
			key = k
		}
	}
	if key.ID == "" {
		d.errorPage(w, r, http.StatusUnauthorized, "Your API key is no longer valid: sign in again.")
		return
	}
	v, err := d.cfg.RequestCalibration(r.Context(), key, in)
	if err != nil {
		if !errors.Is(err, ErrInput) {
			d.serverError(w, r, err)
			return
		}
		d.registryPage(w, r, http.StatusUnprocessableEntity, "", err.Error())
		return
	}
	http.Redirect(w, r, Prefix+"registry?requested="+url.QueryEscape(v.RequestID), http.StatusSeeOther)
}

// --- profile ------------------------------------------------------------------------------

func (d *Dashboard) profilePage(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	sp, err := d.cfg.Storage.Profiles.ProfileByID(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		d.notFound(w, r, "Profile")
		return
	}
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	p, verr := profile.Verify(sp.Body, d.cfg.Trust)
	if p == nil {
		p, err = profile.Parse(sp.Body)
		if err != nil {
			d.serverError(w, r, err)
			return
		}
	}
	sig := "signature valid (key " + p.SigningKeyID + " of this service's trust bundle)"
	if verr != nil {
		sig = "SIGNATURE NOT VALID against this service's trust bundle: " + verr.Error()
	}
	d.render(w, r, http.StatusOK, "profile", map[string]any{
		"Title": "Profile " + p.ProfileID, "P": p, "Stored": sp, "Chart": BoundsChart(p), "Signature": sig, "SignatureOK": verr == nil,
		"Classes": presentClasses(p),
	})
}

// --- runs ---------------------------------------------------------------------------------

// RunRow is one row of the runs page.
type RunRow struct {
	store.Run
	VPEC *vpec.VPEC // nil while the run has no VPEC, or when Skipped
	// Skipped: the VPEC was not read, the page's Config.ScanBytes being
	// spent (its own page shows it).
	Skipped bool
	// Log is the VPEC's place in the transparency log (nil while the run
	// has no VPEC).
	Log *logPosition
}

func (d *Dashboard) runs(w http.ResponseWriter, r *http.Request) {
	s := current(r)
	q := r.URL.Query()
	f := store.RunFilter{WorkflowID: strings.TrimSpace(q.Get("workflow")), State: q.Get("state"), Environment: s.Environment, Limit: 100}
	if f.State != "open" && f.State != "sealed" {
		f.State = ""
	}
	floor, gapsOnly := q.Get("floor"), q.Get("gaps") == "1"
	runs, err := d.cfg.Storage.Runs.RunsOfOrg(r.Context(), s.OrgID, f)
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	var rows []RunRow
	budget := newBudget(d.cfg.ScanBytes)
	logState, logErr := d.logState(r.Context())
	for _, run := range runs {
		row := RunRow{Run: run}
		if run.VPECID != "" {
			info, err := d.cfg.Storage.VPECs.VPECInfo(r.Context(), s.OrgID, run.VPECID)
			switch {
			case err == nil:
				row.Log = position(logState, logErr, info.Logged, info.LogIndex)
			case !errors.Is(err, store.ErrNotFound):
				d.serverError(w, r, err)
				return
			}
		}
		skipped := budget.SkippedVPECs
		v, err := budget.vpec(r.Context(), d.cfg.Storage.VPECs, run)
		if err != nil {
			d.serverError(w, r, err)
			return
		}
		row.Skipped = budget.SkippedVPECs > skipped
		if v != nil {
			v.Records = nil // the page shows counts only
			row.VPEC = v
		}
		if floor != "" && (row.VPEC == nil || string(row.VPEC.ProofLevelFloor) != floor) {
			continue
		}
		if gapsOnly && (row.VPEC == nil || len(row.VPEC.Gaps) == 0) {
			continue
		}
		rows = append(rows, row)
	}
	d.render(w, r, http.StatusOK, "runs", map[string]any{
		"Title": "Runs and VPECs", "Rows": rows, "Workflow": f.WorkflowID, "State": f.State, "Floor": floor, "GapsOnly": gapsOnly,
		"Levels": vpec.ProofLevels(), "Scan": &budget.Scan,
	})
}

// --- VPEC ---------------------------------------------------------------------------------

// storeProfiles resolves profile ids from the service's published profiles.
type storeProfiles struct {
	d *Dashboard
	r *http.Request
}

func (p storeProfiles) Profile(id string) ([]byte, error) {
	sp, err := p.d.cfg.Storage.Profiles.ProfileByID(p.r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("profile %s: %w", id, verify.ErrProfileNotFound)
	}
	return sp.Body, err
}

func (d *Dashboard) vpecPage(w http.ResponseWriter, r *http.Request) {
	sv, release, ok := d.loadVPEC(w, r)
	if !ok {
		return
	}
	defer release()
	// The tables below the report read the document with encoding/json; a
	// body it cannot decode is said so, not shown as a VPEC without gaps
	// or records (the report says what verification found).
	var v vpec.VPEC
	var decodeErr string
	if err := json.Unmarshal(sv.Body, &v); err != nil {
		v, decodeErr = vpec.VPEC{}, err.Error()
	}
	circuits, err := d.publishedCircuits(r.Context(), &v)
	if err != nil {
		d.serverError(w, r, err)
		return
	}
	root := d.trustRoot()
	opts := verify.Options{Trust: d.cfg.Trust, Root: root, Profiles: storeProfiles{d, r},
		Proofs: &zkverify.Verifier{Trust: d.cfg.Trust, Root: root, Circuits: circuits, Given: "published circuit entry"}, CircuitAdvice: CircuitAdvice}
	if d.cfg.Receipts != nil {
		if opts.Receipt, err = d.cfg.Receipts(r.Context(), sv); err != nil {
			d.serverError(w, r, fmt.Errorf("receipt of %s: %w", sv.ID, err))
			return
		}
	}
	report, err := verify.Verify(sv.Body, opts)
	if report == nil {
		d.serverError(w, r, err)
		return
	}
	report.TrustRoot = &verify.TrustRoot{File: "this service's trust bundle", Source: "svc serve"}
	if root != nil && !root.Legacy() {
		report.TrustRoot.File = fmt.Sprintf("this service's trust root (version %d)", root.Version)
	}
	logState, logErr := d.logState(r.Context())
	d.render(w, r, http.StatusOK, "vpec", map[string]any{
		"Title": "VPEC " + sv.ID, "Report": report, "V": &v, "DecodeError": decodeErr, "Stored": sv, "Downloads": downloads, "MaxRecords": 200,
		"Log": position(logState, logErr, sv.Logged, sv.LogIndex), "Receipt": opts.Receipt != nil,
	})
}

// trustRoot is the root VPEC pages verify against: CurrentRoot's, else
// TrustRoot (nil: the trust bundle alone).
func (d *Dashboard) trustRoot() *trustroot.Root {
	if d.cfg.CurrentRoot != nil {
		if r := d.cfg.CurrentRoot(); r != nil {
			return r
		}
	}
	return d.cfg.TrustRoot
}

// CircuitAdvice is what a VPEC page tells a user whose VPEC has a proof
// whose circuit entry this service has not published
// (verify.Options.CircuitAdvice).
const CircuitAdvice = "this service has not published that circuit entry: an operator publishes it with svc registry publish-circuit, or check the proof offline with the entry (svc verify --circuit)"

// publishedCircuits returns this service's published circuit entries
// (the registry svc registry get-circuit reads, Storage.Circuits) of
// the circuit ids v's records prove with. Each is added as given
// explicitly, so one that is corrupt fails the zk_proofs check instead
// of reading as missing.
func (d *Dashboard) publishedCircuits(ctx context.Context, v *vpec.VPEC) (*zkverify.Set, error) {
	set := zkverify.NewSet()
	cs := d.cfg.Storage.Circuits
	if cs == nil {
		return set, nil // no registry: every proof's entry is missing, and the page says so
	}
	seen := map[string]bool{}
	for i := range v.Records {
		z := v.Records[i].ZKProof
		if z == nil || seen[z.CircuitID] {
			continue
		}
		seen[z.CircuitID] = true
		c, err := cs.CircuitByID(ctx, z.CircuitID)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("circuit entry %s: %w", z.CircuitID, err)
		}
		if err := set.AddExplicitDoc(z.CircuitID, c.Body); err != nil {
			return nil, fmt.Errorf("published circuit entry %s: %w", z.CircuitID, err)
		}
	}
	return set, nil
}

// loadVPEC loads the VPEC named in the path for its page or a download:
// one of the session's organisation (404 otherwise) and environment (403
// otherwise: a sandbox session sees no production VPEC, and the other way
// round), admitted by its size within the byte budget before it is read
// (503 with Retry-After past it). On success the caller must call
// release once done with the VPEC.
func (d *Dashboard) loadVPEC(w http.ResponseWriter, r *http.Request) (sv store.VPEC, release func(), ok bool) {
	s := current(r)
	info, err := d.cfg.Storage.VPECs.VPECInfo(r.Context(), s.OrgID, r.PathValue("vpec_id"))
	if errors.Is(err, store.ErrNotFound) {
		d.notFound(w, r, "VPEC")
		return sv, nil, false
	}
	if err != nil {
		d.serverError(w, r, err)
		return sv, nil, false
	}
	if info.Environment != s.Environment {
		d.errorPage(w, r, http.StatusForbidden, fmt.Sprintf("VPEC %s belongs to a %s run and you are signed in with a %s key: a session sees only its own environment's runs; sign in with a %s key.",
			info.ID, info.Environment, s.Environment, info.Environment))
		return sv, nil, false
	}
	sandbox := s.Environment == string(vpec.Sandbox)
	if !d.busy.Take(info.Size, sandbox) {
		w.Header().Set("Retry-After", "5")
		d.errorPage(w, r, http.StatusServiceUnavailable, fmt.Sprintf("The service is verifying other large VPECs (this one is %d bytes): try again in a few seconds, or download it and run svc verify.", info.Size))
		return sv, nil, false
	}
	release = func() { d.busy.Release(info.Size, sandbox) }
	if sv, err = d.cfg.Storage.VPECs.VPEC(r.Context(), s.OrgID, info.ID); err != nil {
		release()
		d.serverError(w, r, err)
		return sv, nil, false
	}
	return sv, release, true
}

// download is one file offered on a VPEC page.
type download struct{ File, Label string }

var downloads = []download{
	{"vpec.json", "VPEC (JSON, as issued)"},
	{"trust-bundle.pem", "Trust bundle (PEM: service keys and TSA roots)"},
	{"vpec.sigstore.json", "Sigstore bundle v0.3 (as svc export --format sigstore-bundle)"},
	{"vpec.signed.json", "Signed bytes (the artifact the Sigstore bundle covers)"},
	{"trusted_root.json", "Sigstore trusted root (for cosign / sigstore-go)"},
	{"attestation.sigstore.json", "in-toto attestation (DSSE, as GET /api/v1/vpecs/{id}/attestation)"},
}

// receiptFile is the download of a VPEC's transparency log receipt
// (svc.tlog.receipt/v1, as GET /api/v1/vpecs/{id}/receipt and svc verify
// --receipt take it), linked from the page's log section once a
// checkpoint covers the VPEC.
const receiptFile = "receipt.json"

func (d *Dashboard) download(w http.ResponseWriter, r *http.Request) {
	file := r.PathValue("file")
	if file != receiptFile && !slices.ContainsFunc(downloads, func(dl download) bool { return dl.File == file }) {
		d.notFound(w, r, "Download "+file)
		return
	}
	sv, release, ok := d.loadVPEC(w, r)
	if !ok {
		return
	}
	defer release()
	var body []byte
	var err error
	ctype := "application/json"
	switch file {
	case receiptFile:
		if d.cfg.Receipts != nil {
			if body, err = d.cfg.Receipts(r.Context(), sv); err != nil {
				d.serverError(w, r, fmt.Errorf("receipt of %s: %w", sv.ID, err))
				return
			}
		}
		if body == nil {
			d.errorPage(w, r, http.StatusNotFound, "No transparency log receipt for "+sv.ID+" yet: the VPEC is not in the log, or no checkpoint covers it yet (see its page).")
			return
		}
	case "vpec.json":
		body = sv.Body
	case "trust-bundle.pem":
		body, ctype = d.cfg.Trust.Marshal(), "application/x-pem-file"
	case "vpec.sigstore.json", "vpec.signed.json":
		ex, err := sigstore.ExportBundle(sv.Body)
		if err != nil {
			d.errorPage(w, r, http.StatusUnprocessableEntity, "This VPEC cannot be exported as a Sigstore bundle: "+err.Error())
			return
		}
		body = ex.Bundle
		if file == "vpec.signed.json" {
			body = ex.Artifact
		}
	case "trusted_root.json":
		if body, err = sigstore.TrustedRootFor(d.cfg.Trust, d.cfg.TrustRoot); err != nil {
			d.serverError(w, r, err)
			return
		}
	case "attestation.sigstore.json":
		seal, err := d.attestationSeal(r, sv)
		if err != nil {
			d.errorPage(w, r, http.StatusUnprocessableEntity, "No attestation for this VPEC: "+err.Error())
			return
		}
		w.Header().Set("Content-Type", sigstore.BundleMediaType)
		w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s-%s"`, sv.ID, file))
		if err := sigstore.WriteAttestation(httpbody.NewWriter(w, d.cfg.WriteStall), sv.Body, seal); err != nil {
			d.log.WarnContext(r.Context(), "dashboard: download cut", "path", r.URL.Path, "error", err.Error())
		}
		return
	}
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s-%s"`, sv.ID, file))
	if err := httpbody.Write(w, http.StatusOK, ctype, body, d.cfg.WriteStall); err != nil {
		d.log.WarnContext(r.Context(), "dashboard: download cut", "path", r.URL.Path, "error", err.Error())
	}
}

// attestationSeal is the seal of sv's attestation: Config.Attestation's
// (shared with the API), or a fresh one.
func (d *Dashboard) attestationSeal(r *http.Request, sv store.VPEC) (*sigstore.AttestationSeal, error) {
	if d.cfg.Attestation != nil {
		return d.cfg.Attestation(r.Context(), sv)
	}
	return sigstore.SealAttestation(r.Context(), sv.Body, d.cfg.Signer, d.cfg.Timestamper)
}

// presentClasses lists the operator classes the profile has bounds for, in
// the canonical order.
func presentClasses(p *profile.Profile) []string {
	var out []string
	for _, c := range profile.OperatorClasses() {
		if _, ok := p.Operators[c]; ok {
			out = append(out, c)
		}
	}
	return out
}

// logPosition is what the runs page and a VPEC page say of a VPEC's place
// in the transparency log.
type logPosition struct {
	Off        bool // the service has no log: "not logged"
	Logged     bool // false: "pending" (appended at the next start or receipt request)
	Index      uint64
	Integrated bool   // a checkpoint covers the entry: its receipt is ready
	Size       uint64 // the latest checkpoint's size
	// Witnessing: the witness policy requires cosignatures; Witnessed:
	// the newest checkpoint they cosigned (of WitnessedSize entries)
	// covers the entry.
	Witnessing, Witnessed bool
	WitnessedSize         uint64
	Err                   string // the checkpoint could not be read
}

// logState reads the log's state once for a page: nil without a log; the
// error is shown on the page, not failed.
func (d *Dashboard) logState(ctx context.Context) (*LogStatus, string) {
	if d.cfg.LogStatus == nil {
		return nil, ""
	}
	st, err := d.cfg.LogStatus(ctx)
	if err != nil {
		return &LogStatus{}, err.Error()
	}
	return &st, ""
}

// position places a VPEC (logged at index when logged) in the log whose
// state is st (nil: no log).
func position(st *LogStatus, stErr string, logged bool, index uint64) *logPosition {
	if st == nil {
		return &logPosition{Off: true}
	}
	p := &logPosition{Logged: logged, Index: index, Err: stErr}
	if !logged || stErr != "" {
		return p
	}
	p.Size, p.Integrated = st.Size, st.Size > index
	p.Witnessing, p.WitnessedSize = st.Witnessing, st.WitnessedSize
	p.Witnessed = st.Witnessing && st.WitnessedSize > index
	return p
}
