package cli

import (
	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/app/cli/verifycmd"
)

func (a *app) hashCmd() *cobra.Command { return verifycmd.Hash(a.core) }
