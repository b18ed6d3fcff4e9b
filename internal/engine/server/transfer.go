package server

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/engine/storage"
	"github.com/ai-memory/ai-memory/internal/engine/webhook"
	"github.com/ai-memory/ai-memory/internal/keyfile"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// maxImportBatch bounds one Import request's records.
const maxImportBatch = 10000

// Transfer serves Export and Import, for hosts only: a plugin reaches
// memory through the record APIs and their checks.
type Transfer struct {
	aimemoryv1.UnimplementedTransferServer
	st storage.Backend
	// sealer is this data dir's webhook secret key; nil: none.
	sealer *webhook.Sealer
	errorMapper
}

func (s *Transfer) Export(_ *aimemoryv1.ExportRequest, stream grpc.ServerStreamingServer[aimemoryv1.ExportRecord]) error {
	return s.status(s.st.Export(stream.Context(), stream.Send))
}

func (s *Transfer) Import(ctx context.Context, req *aimemoryv1.ImportRequest) (*aimemoryv1.ImportResponse, error) {
	if n := len(req.GetRecords()); n > maxImportBatch {
		return nil, status.Errorf(codes.InvalidArgument, "records: at most %d per request (got %d)", maxImportBatch, n)
	}
	var source *webhook.Sealer
	if k := req.GetSourceWebhookKey(); len(k) > 0 {
		if len(k) != keyfile.Size {
			return nil, status.Errorf(codes.InvalidArgument, "source_webhook_key: must be %d bytes (got %d)", keyfile.Size, len(k))
		}
		var err error
		if source, err = webhook.NewSealer(k); err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "source_webhook_key: %v", err)
		}
	}
	// Subscriptions' secrets are re-sealed for this data dir first; one
	// that cannot be is refused here and the others go to the backend.
	recs := req.GetRecords()
	results := make([]*aimemoryv1.ImportResult, len(recs))
	pass, at := make([]*aimemoryv1.ExportRecord, 0, len(recs)), make([]int, 0, len(recs))
	for i, r := range recs {
		if sub := r.GetSubscription(); sub != nil && len(sub.GetSealedSecret()) > 0 {
			sealed, why := s.reseal(sub, source)
			if why != "" {
				results[i] = &aimemoryv1.ImportResult{Outcome: "refused", Error: why}
				continue
			}
			c := proto.Clone(sub).(*aimemoryv1.WebhookSubscription)
			c.SealedSecret = sealed
			r = &aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_Subscription{Subscription: c}}
		}
		pass, at = append(pass, r), append(at, i)
	}
	got, err := s.st.Import(ctx, pass)
	if err != nil {
		return nil, s.status(err)
	}
	for j, i := range at {
		results[i] = got[j]
	}
	return &aimemoryv1.ImportResponse{Results: results}, nil
}

// reseal returns sub's secret sealed under this data dir's key: as it is
// when that key opens it, else opened with the exporting data dir's key
// and sealed again. The secret itself is never returned or logged; why
// says what is missing.
func (s *Transfer) reseal(sub *aimemoryv1.WebhookSubscription, source *webhook.Sealer) (sealed []byte, why string) {
	if s.sealer == nil {
		return nil, "subscription " + sub.GetId() + ": this engine has no webhook secret key to seal its secret with"
	}
	if plain, err := s.sealer.Open(sub.GetId(), sub.GetSealedSecret()); err == nil {
		clear(plain)
		return sub.GetSealedSecret(), ""
	}
	if source == nil {
		return nil, "subscription " + sub.GetId() + ": its secret is sealed with the exporting data dir's " + webhook.SecretKeyFile + "; import with --webhook-key <that data dir>/" + webhook.SecretKeyFile
	}
	plain, err := source.Open(sub.GetId(), sub.GetSealedSecret())
	if err != nil {
		return nil, "subscription " + sub.GetId() + ": its secret does not open with the given webhook key"
	}
	defer clear(plain)
	out, err := s.sealer.Seal(sub.GetId(), plain)
	if err != nil {
		return nil, "subscription " + sub.GetId() + ": sealing its secret: " + err.Error()
	}
	return out, ""
}
