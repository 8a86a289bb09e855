package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/client"
)

func (a *app) calibrateCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "calibrate", Short: "Drift profile calibration"}
	var (
		co                  clientOptions
		hash, model, hub, e string
		gpus                []string
		desc                string
	)
	req := &cobra.Command{
		Use:     "request (--model-hash H | --model FILE)",
		Short:   "Request the calibration of a drift profile for a model",
		Example: `  svc calibrate request --model ./pii-model --hub-model-id acme/pii-distilbert --gpu-class cpu,a10g --email ml@acme.example`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := modelHash(hash, model)
			if err != nil {
				return err
			}
			return co.do(func(p *client.Pipeline) error {
				st, err := p.RequestCalibration(cmdContext(cmd), client.CalibrationRequest{ONNXModelHash: h, HubModelID: hub, DesiredGPUClasses: gpus, NotifyEmail: e, ModelDescription: desc})
				if err != nil {
					return &Error{Code: ExitFailure, Err: err}
				}
				if co.output == outputJSON {
					return a.writeJSON(st)
				}
				fmt.Fprintf(a.streams.Out, "%s %s (estimated completion %s)\n", st.RequestID, st.Status, st.EstimatedCompletion)
				return nil
			})
		},
	}
	co.add(req)
	req.Flags().StringVar(&hash, "model-hash", "", "the model's onnx_model_hash (sha256:…)")
	req.Flags().StringVar(&model, "model", "", "ONNX model file (or directory with model.onnx) to hash")
	req.Flags().StringVar(&hub, "hub-model-id", "", "the model's id on a public model hub")
	req.Flags().StringSliceVar(&gpus, "gpu-class", nil, "GPU classes to calibrate for: cpu, a10g, a100, h100 (default cpu)")
	req.Flags().StringVar(&e, "email", "", "address notified when the profile is published")
	req.Flags().StringVar(&desc, "description", "", "free text describing the model")
	cmd.AddCommand(req, a.calibrateRunCmd(), a.calibrateMergeCmd())
	return cmd
}
