package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"time"
)

// The headers of a delivery. The body is JSON (Content-Type
// application/json). The signature is HMAC-SHA256, keyed by the secret
// exactly as the subscriber gave it, over "<timestamp>.<body>", where
// timestamp is the HeaderTimestamp value (Unix seconds) and body the raw
// request body; it is sent as "sha256=<lowercase hex>". An unsigned
// subscription (no secret) gets no HeaderSignature.
const (
	HeaderTimestamp = "X-AI-Memory-Timestamp"
	HeaderSignature = "X-AI-Memory-Signature"
	// HeaderDelivery is "<subscription id>:<event seq>": the same on every
	// attempt, so a receiver can drop a repeat (delivery is at least once).
	HeaderDelivery = "X-AI-Memory-Delivery"
	HeaderEvent    = "X-AI-Memory-Event"
)

// Sign is the HeaderSignature value for body sent at timestamp ts.
func Sign(secret []byte, ts int64, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(strconv.FormatInt(ts, 10)))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// Verify checks a delivery as a receiver would: the signature over
// "<timestamp>.<body>" in constant time, and a timestamp within tolerance
// of now (replays of old deliveries fail).
func Verify(secret []byte, timestamp, signature string, body []byte, now time.Time, tolerance time.Duration) error {
	ts, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return errors.New("bad timestamp header")
	}
	if d := now.Sub(time.Unix(ts, 0)); d > tolerance || d < -tolerance {
		return errors.New("timestamp outside tolerance")
	}
	if !hmac.Equal([]byte(Sign(secret, ts, body)), []byte(signature)) {
		return errors.New("signature mismatch")
	}
	return nil
}
