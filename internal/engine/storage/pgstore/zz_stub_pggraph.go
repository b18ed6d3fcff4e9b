package pgstore

import "fmt"

// TEMPORARY (deleted at merge): the import's refusal, as boltstore's
// transfer.go has it, which pgxfer's Import provides. The graph's import
// steps return it for a record they turn down.
type refusal struct{ error }

func refuse(format string, a ...any) error { return refusal{fmt.Errorf(format, a...)} }
