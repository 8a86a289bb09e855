package clicore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"
)

// Config is where unset flags get their values: the environment
// (SVC_<FLAG>) and a config file.
type Config interface {
	// Read reads the config file at path. A file that does not exist is
	// an error wrapping fs.ErrNotExist.
	Read(path string) error
	// FileUsed is the config file read, or "".
	FileUsed() string
	// Lookup returns the value of the flag named name from the
	// environment, else from the config file.
	Lookup(name string) (string, bool)
	// FileKeys are the keys the config file sets.
	FileKeys() []string
}

// LoadConfig fills the unset flags of cmd: a flag given on the command
// line wins, then the environment, then the config file
// (--config, SVC_CONFIG, else svc/config.yaml in the user config directory).
func (a *App) LoadConfig(cmd *cobra.Command) error {
	path := a.cfgFile
	if path == "" {
		path = a.Streams.Getenv("SVC_CONFIG")
	}
	explicit := path != ""
	if path == "" {
		if dir, err := os.UserConfigDir(); err == nil {
			path = dir + "/svc/config.yaml"
		}
	}
	if path != "" {
		if err := a.Config.Read(path); err != nil {
			// The default file need not exist; a named one must.
			_, statErr := os.Stat(path)
			if explicit || (statErr == nil && !errors.Is(err, fs.ErrNotExist)) {
				return Errorf(ExitUsage, "fix the file or point --config / SVC_CONFIG elsewhere", "config file %s: %v", path, err)
			}
		}
	}
	if file := a.Config.FileUsed(); file != "" && a.WarnUnknownKeys {
		a.warnUnknownKeys(cmd.Root(), file)
	}
	var bindErr error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Name == "config" || f.Name == "help" || f.Changed {
			return
		}
		if v, ok := a.Config.Lookup(f.Name); ok {
			if err := cmd.Flags().Set(f.Name, v); err != nil && bindErr == nil {
				bindErr = Errorf(ExitUsage, "fix "+envName(f.Name)+" or the config file", "%s from environment or config: %v", f.Name, err)
			}
		}
	})
	return bindErr
}

// warnUnknownKeys warns about each key of the config file that is no flag
// of any command of the tree (a typo would otherwise be ignored silently).
func (a *App) warnUnknownKeys(root *cobra.Command, file string) {
	known := map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) { known[f.Name] = true })
		c.PersistentFlags().VisitAll(func(f *pflag.Flag) { known[f.Name] = true })
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	for _, k := range a.Config.FileKeys() {
		if !known[k] {
			fmt.Fprintf(a.Streams.Err, "%s: warning: config file %s: unknown key %q (no %s command has a flag of that name); ignored\n", a.Name, file, k, a.Name)
		}
	}
}

// FileConfig is a small Config for the verifier: SVC_<FLAG> environment
// variables (empty means unset) and a flat YAML or JSON config file
// (.yaml, .yml or .json) whose keys are flag names. It reads the same
// files svc reads, without svc's configuration library (which links
// net/http).
type FileConfig struct {
	file   string
	values map[string]string
	keys   []string
}

// ErrConfigType is returned by FileConfig.Read for a config file whose
// extension is not .yaml, .yml or .json.
var ErrConfigType = errors.New("unsupported config file type (want .yaml, .yml or .json)")

// Read reads a YAML or JSON config file of flag names and scalar values.
func (c *FileConfig) Read(path string) error {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml", ".json":
	default:
		return fmt.Errorf("%w: %q", ErrConfigType, filepath.Ext(path))
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var m map[string]any
	if err := yaml.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("parse: %w", err)
	}
	c.file, c.values, c.keys = path, map[string]string{}, nil
	for k, v := range m {
		k = strings.ToLower(k)
		c.keys = append(c.keys, k)
		switch v := v.(type) {
		case nil, map[string]any, []any:
			// Not a flag value; left for svc's own commands.
		default:
			c.values[k] = fmt.Sprint(v)
		}
	}
	sort.Strings(c.keys)
	return nil
}

// FileUsed is the config file read, or "".
func (c *FileConfig) FileUsed() string { return c.file }

// Lookup returns SVC_<NAME> when set and not empty, else the file's value.
func (c *FileConfig) Lookup(name string) (string, bool) {
	if v := os.Getenv(envName(name)); v != "" {
		return v, true
	}
	v, ok := c.values[name]
	return v, ok
}

// FileKeys are the keys the config file sets.
func (c *FileConfig) FileKeys() []string { return c.keys }
