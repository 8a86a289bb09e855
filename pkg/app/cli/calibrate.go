package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/client"
)

func (a *app) calibrateCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "calibrate", Short: "Drift profile calibration"}
	cmd.AddCommand(newCmdCalibrateRequest(a, nil), newCmdCalibrateRun(a, nil), newCmdCalibrateMerge(a, nil))
	return cmd
}

// calibrateRequestOptions are the flags of svc calibrate request.
type calibrateRequestOptions struct {
	co                            clientOptions
	hash, model, hub, email, desc string
	gpus                          []string
}

// newCmdCalibrateRequest builds svc calibrate request; runF, when not nil,
// gets the parsed options instead of the run (a test's seam).
func newCmdCalibrateRequest(a *app, runF func(*calibrateRequestOptions) error) *cobra.Command {
	o := &calibrateRequestOptions{}
	req := &cobra.Command{
		Use:     "request (--model-hash H | --model FILE)",
		Short:   "Request the calibration of a drift profile for a model",
		Example: `  svc calibrate request --model ./pii-model --hub-model-id acme/pii-distilbert --gpu-class cpu,a10g --email ml@acme.example`,
		Args:    cobra.NoArgs,
		RunE: clientRunE(o, &o.co, func(args []string) error {
			return checkModelRef(o.hash, o.model)
		}, runF, a.runCalibrateRequest),
	}
	o.co.add(req)
	req.Flags().StringVar(&o.hash, "model-hash", "", "the model's onnx_model_hash (sha256:…)")
	req.Flags().StringVar(&o.model, "model", "", "ONNX model file (or directory with model.onnx) to hash")
	req.Flags().StringVar(&o.hub, "hub-model-id", "", "the model's id on a public model hub")
	req.Flags().StringSliceVar(&o.gpus, "gpu-class", nil, "GPU classes to calibrate for: cpu, a10g, a100, h100 (default cpu)")
	req.Flags().StringVar(&o.email, "email", "", "address notified when the profile is published")
	req.Flags().StringVar(&o.desc, "description", "", "free text describing the model")
	return req
}

// runCalibrateRequest sends the request (Pipeline.RequestCalibration).
func (a *app) runCalibrateRequest(ctx context.Context, o *calibrateRequestOptions) error {
	h, err := modelHash(o.hash, o.model)
	if err != nil {
		return err
	}
	return o.co.do(func(p *client.Pipeline) error {
		st, err := p.RequestCalibration(ctx, client.CalibrationRequest{ONNXModelHash: h, HubModelID: o.hub, DesiredGPUClasses: o.gpus, NotifyEmail: o.email, ModelDescription: o.desc})
		if err != nil {
			return &Error{Code: ExitFailure, Err: err}
		}
		if o.co.output == outputJSON {
			return a.writeJSON(st)
		}
		fmt.Fprintf(a.streams.Out, "%s %s (estimated completion %s)\n", st.RequestID, st.Status, st.EstimatedCompletion)
		return nil
	})
}
