package httpfront

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"fmt"
	"math/big"
	"testing"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
)

// BenchmarkVerifyJWT is the per-request cost of --auth oauth with the
// JWKS already cached: RS256 signature, issuer, audience, expiry.
func BenchmarkVerifyJWT(b *testing.B) {
	key, _ := rsa.GenerateKey(rand.Reader, 2048)
	jwks := fmt.Sprintf(`{"keys":[{"kty":"RSA","kid":"k1","alg":"RS256","use":"sig","n":%q,"e":%q}]}`,
		base64.RawURLEncoding.EncodeToString(key.N.Bytes()), base64.RawURLEncoding.EncodeToString(big.NewInt(int64(key.E)).Bytes()))
	kf, err := keyfunc.NewJWKSetJSON([]byte(jwks))
	if err != nil {
		b.Fatal(err)
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"iss": "https://as.test", "aud": "https://memory.test/mcp",
		"sub": "dana", "exp": time.Now().Add(time.Hour).Unix()})
	tok.Header["kid"] = "k1"
	s, _ := tok.SignedString(key)
	a := OAuthAuth{Keyfunc: kf.Keyfunc, Issuer: "https://as.test", Audience: "https://memory.test/mcp"}
	if _, err := a.Verify(s); err != nil {
		b.Fatal(err)
	}
	b.Run("verify", func(b *testing.B) {
		for b.Loop() {
			if _, err := a.Verify(s); err != nil {
				b.Fatal(err)
			}
		}
	})
	a.Cache = &VerifiedCache{}
	b.Run("remembered", func(b *testing.B) {
		for b.Loop() {
			if _, err := a.Verify(s); err != nil {
				b.Fatal(err)
			}
		}
	})
}
