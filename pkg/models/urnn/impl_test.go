package urnn

import (
	"fmt"
	"math/cmplx"
	"testing"

	"github.com/gomlx/compute/dtypes"

	"github.com/urnn-notebooks/longmemory/pkg/backend"
)

// TestImplsMatchReference checks W of every implementation against the plain-Go
// composition of the factors ([1] §2, eq. 7), entry by entry, for n = 1, 8, 12, 13 (prime) and 16.
func TestImplsMatchReference(t *testing.T) {
	for _, tc := range []struct {
		n     int
		impls []Impl
	}{
		{1, []Impl{FourStep, DenseW}},
		{8, []Impl{FourStep, DenseW, implDenseDFT, implRadix2}},
		{12, []Impl{FourStep, DenseW, implDenseDFT}},
		{13, []Impl{FourStep, DenseW}},
		{16, []Impl{FourStep, DenseW, implDenseDFT, implRadix2}},
	} {
		for _, impl := range tc.impls {
			t.Run(fmt.Sprintf("n=%d/%s", tc.n, implName(impl)), func(t *testing.T) {
				c, store := newTestCell(t, 2, tc.n, 1, dtypes.Float64, impl, 3)
				p := readParams(t, c, store.RootScope())
				re, im, err := c.DenseW(backend.MustNew(), store.RootScope())
				if err != nil {
					t.Fatal(err)
				}
				for j := range tc.n {
					e := make([]complex128, tc.n)
					e[j] = 1
					col := p.refWApply(e)
					for k := range tc.n {
						if got := complex(re[k][j], im[k][j]); cmplx.Abs(got-col[k]) > 1e-12 {
							t.Fatalf("W[%d][%d] = %v, want %v", k, j, got, col[k])
						}
					}
				}
			})
		}
	}
}
