package constructions_test

import (
	"strings"
	"testing"

	"github.com/urnn-notebooks/longmemory/pkg/constructions"
)

// TestCopySuccessRate checks the success rate of Henaff et al. Figure 1 where it is known:
// with S = 1 nothing else is stored, so the recalled ũ_c scores 1 against ũ_i·ũ_c < 1 and
// every trial succeeds; the paper's setting (K = 8, S = 10, d = 128) succeeds in nearly
// every trial; far too few blocks for K and S (d = 4, S = 40) fail nearly always.
func TestCopySuccessRate(t *testing.T) {
	for _, tc := range []struct {
		name              string
		K, S, T, d, draws int
		lo, hi            float64
	}{
		{"S = 1", 16, 1, 50, 8, 100, 1, 1},
		{"paper", 8, 10, 100, 128, 200, 0.95, 1},
		{"too few blocks", 32, 40, 50, 4, 100, 0, 0.05},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := constructions.CopySuccessRate(tc.K, tc.S, tc.T, tc.d, tc.draws, 7)
			if err != nil {
				t.Fatal(err)
			}
			if r < tc.lo || r > tc.hi {
				t.Errorf("CopySuccessRate(K=%d, S=%d, T=%d, d=%d, %d draws) = %.3f, want in [%g, %g]", tc.K, tc.S, tc.T, tc.d, tc.draws, r, tc.lo, tc.hi)
			}
		})
	}
	if _, err := constructions.CopySuccessRate(8, 10, 100, 128, 0, 1); err == nil || !strings.Contains(err.Error(), "draws = 0") {
		t.Errorf("0 draws: error %v, want one naming draws", err)
	}
}

// TestSuccessGrid checks the grid's layout (rows S, columns K), that the success rate falls
// with S at fixed K (more stored symbols interfere), and its table and heat map.
func TestSuccessGrid(t *testing.T) {
	tab, err := constructions.SuccessGrid([]int{4, 32}, []int{1, 30}, 40, 16, 60, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Rate) != 2 || len(tab.Rate[0]) != 2 {
		t.Fatalf("Rate is %d×%d, want 2×2 (S × K)", len(tab.Rate), len(tab.Rate[0]))
	}
	for j, K := range tab.Ks {
		if tab.Rate[0][j] != 1 || !(tab.Rate[1][j] < tab.Rate[0][j]) {
			t.Errorf("K = %d: rate %.3f at S = 1 and %.3f at S = 30, want 1 and less", K, tab.Rate[0][j], tab.Rate[1][j])
		}
	}
	md := tab.Markdown()
	if !strings.Contains(md, "| S \\ K | 4 | 32 |") || !strings.Contains(md, "| 1 | 100.0 | 100.0 |") {
		t.Errorf("Markdown:\n%s", md)
	}
	fig := tab.Heatmap()
	if !fig.Annotate || len(fig.Values) != 2 || fig.Values[0][0] != 100 {
		t.Errorf("Heatmap: want the annotated rates in percent, got %+v", fig)
	}
	svg := fig.SVG()
	for _, want := range []string{">100.0<", ">32<", "d = 16"} {
		if !strings.Contains(svg, want) {
			t.Errorf("SVG misses %q", want)
		}
	}
	if _, err := fig.PNG(); err != nil {
		t.Error(err)
	}
}
