package constructions

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/urnn-notebooks/longmemory/pkg/plots"
)

// PaperDraws and PaperBlocks are the setting of Henaff et al. §3.1.1, Figure 1: "the
// number of successes over 500 runs with d = 128".
const (
	PaperDraws  = 500
	PaperBlocks = 128
)

// GridKs and GridSs are the K and S values of the success-rate table computed for this
// project (the axis values of the paper's Figure 1 were lost in the text conversion): K
// doubles from 2 to 128, and S spans the drop from 100% (S = 5) to almost 0 (S = 30) at
// d = 128.
var (
	GridKs = []int{2, 4, 8, 16, 32, 64, 128}
	GridSs = []int{5, 8, 10, 12, 15, 20, 25, 30}
)

// CopySuccessRate returns the success rate of the copy construction over `draws` random
// trials (Henaff et al. §3.1.1, Figure 1). Trial i draws a fresh construction
// Copy(K, S, T, d, s_i) and one fresh sequence of tasks.Copy{T, K, S}, with s_i derived
// from seed and i, and runs the linear recurrence in plain Go float64. A trial succeeds
// when every one of the S recalled symbols is right, i.e. the arg max of the K + 1 output
// logits at recall step j is the j-th data symbol. (The blank steps before the marker are
// right by a wide margin in every trial we ran, see EvaluateCopy's BlankAccuracy, and the
// marker step is wrong by construction, so neither enters.) The paper varies K and S
// with d = 128 and reports no strong dependence on T.
func CopySuccessRate(K, S, T, d, draws int, seed uint64) (float64, error) {
	if draws < 1 {
		return 0, fmt.Errorf("constructions: CopySuccessRate draws = %d, want >= 1", draws)
	}
	ok := 0
	for i := range draws {
		si := seed ^ (uint64(i+1) * 0x9e3779b97f4a7c15)
		c, err := Copy(K, S, T, d, si)
		if err != nil {
			return 0, err
		}
		b, err := c.Task().Sample(rand.New(rand.NewPCG(si, saltSequences)), 1)
		if err != nil {
			return 0, err
		}
		net, err := newLinear(c.Weights)
		if err != nil {
			return 0, err
		}
		success := true
		for t := range b.Len {
			net.step(b.X[t*b.NumIn : (t+1)*b.NumIn])
			if t < T+S || !success {
				continue
			}
			want := int(b.Labels[t])
			best, bestV := 0, net.outputRow(0)
			for o := 1; o < net.out; o++ {
				if v := net.outputRow(o); v > bestV {
					best, bestV = o, v
				}
			}
			success = best == want
		}
		if success {
			ok++
		}
	}
	return float64(ok) / float64(draws), nil
}

// SuccessTable is the success rate of the copy construction over a grid of K (data
// symbols) and S (symbols to remember): Rate[i][j] is CopySuccessRate(Ks[j], Ss[i], T, D,
// Draws, Seed), Henaff et al. Figure 1.
type SuccessTable struct {
	Ks, Ss      []int
	T, D, Draws int
	Seed        uint64
	Rate        [][]float64
}

// SuccessGrid computes the SuccessTable for every K in Ks and S in Ss.
func SuccessGrid(Ks, Ss []int, T, d, draws int, seed uint64) (*SuccessTable, error) {
	if len(Ks) == 0 || len(Ss) == 0 {
		return nil, fmt.Errorf("constructions: SuccessGrid with %d values of K and %d of S, want at least one of each", len(Ks), len(Ss))
	}
	tab := &SuccessTable{Ks: Ks, Ss: Ss, T: T, D: d, Draws: draws, Seed: seed}
	for _, S := range Ss {
		row := make([]float64, len(Ks))
		for j, K := range Ks {
			r, err := CopySuccessRate(K, S, T, d, draws, seed)
			if err != nil {
				return nil, err
			}
			row[j] = r
		}
		tab.Rate = append(tab.Rate, row)
	}
	return tab, nil
}

// Heatmap draws the table as an annotated heat map of success percentages (rows S,
// columns K), like Henaff et al. Figure 1.
func (tab *SuccessTable) Heatmap() plots.Heatmap {
	vals := make([][]float64, len(tab.Rate))
	for i, row := range tab.Rate {
		vals[i] = make([]float64, len(row))
		for j, r := range row {
			vals[i][j] = 100 * r
		}
	}
	lo, hi := 0.0, 100.0
	return plots.Heatmap{
		Title:  fmt.Sprintf("Success %% (d = %d, T = %d, %d draws)", tab.D, tab.T, tab.Draws),
		XLabel: "K (data symbols)", YLabel: "S (symbols to remember)",
		Values: vals, RowLabels: labels(tab.Ss), ColLabels: labels(tab.Ks),
		Min: &lo, Max: &hi, Annotate: true, Format: "%.1f", CellW: 56, CellH: 28,
	}
}

// Markdown returns the table in Markdown, success rates in percent.
func (tab *SuccessTable) Markdown() string {
	var b strings.Builder
	b.WriteString("| S \\ K |")
	for _, K := range tab.Ks {
		fmt.Fprintf(&b, " %d |", K)
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(tab.Ks)) + "\n")
	for i, S := range tab.Ss {
		fmt.Fprintf(&b, "| %d |", S)
		for _, r := range tab.Rate[i] {
			fmt.Fprintf(&b, " %.1f |", 100*r)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func labels(v []int) []string {
	out := make([]string, len(v))
	for i, x := range v {
		out[i] = fmt.Sprint(x)
	}
	return out
}
