package sdk

import (
	"bytes"
	"encoding/json"
	"testing"
)

// The host's go-plugin reads hclog's JSON keys; anything else it drops to debug.
func TestLoggerSpeaksHclogJSON(t *testing.T) {
	var buf bytes.Buffer
	newLogger(&buf).With("family", "core").Warn("recording access failed", "err", "no space")
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("%v: %s", err, buf.String())
	}
	if line["@level"] != "warn" || line["@message"] != "recording access failed" || line["family"] != "core" || line["err"] != "no space" || line["time"] != nil {
		t.Errorf("log line = %s", buf.String())
	}
}
