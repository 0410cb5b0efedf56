package main

import (
	"io"
	"log/slog"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/politecrawl/crawler/frontier"
	"github.com/politecrawl/crawler/storage"
)

// jsonError is a command's error when its log is JSON (log.format: json,
// --log-format json): exitCode writes it as one more JSON record, so that
// every line on stderr is JSON, the last one and a config's problems too.
type jsonError struct{ err error }

func (e *jsonError) Error() string { return e.err.Error() }
func (e *jsonError) Unwrap() error { return e.err }

// writeJSONError writes err as a log record of level ERROR with the exit
// code the process ends with.
func writeJSONError(w io.Writer, err error, code int) {
	log := slog.New(slog.NewJSONHandler(storage.JSONWriter(w), nil))
	log.Error("crawler: "+frontier.Redact(err.Error()), "exit_code", code)
}

// logsJSON reports whether the arguments of a command ask for a JSON log:
// a --log-format flag (the last one wins, as flag parsing has it), or
// else log.format in the -c/--config file. The file is read leniently:
// one too broken to say is a text log, as its error is then about the
// file.
func logsJSON(args []string) bool {
	format, path := "", ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if name != "log-format" && name != "c" && name != "config" {
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				break
			}
			i++
			val = args[i]
		}
		if name == "log-format" {
			format = val
		} else {
			path = val
		}
	}
	if format == "" && path != "" {
		if data, err := readConfigFile(path); err == nil {
			var c struct {
				Log struct {
					Format string `yaml:"format"`
				} `yaml:"log"`
			}
			if yaml.Unmarshal(data, &c) == nil {
				format = c.Log.Format
			}
		}
	}
	return format == "json"
}
