package rnn

// Params returns the number of values a cell trains (its NumParams; every cell of this project
// has one) and its degrees of freedom: fewer when one of its matrices lives on a group and the
// cell counts them (FreeParams). The full-capacity uRNN stores Re W and Im W, 2n² values, of a W
// in the unitary group U(n), of dimension n² (fcurnn.Cell.FreeParams); the scoRNN stores W, n²
// values, and moves it through the n(n−1)/2 free entries of a skew-symmetric A
// (scornn.Cell.FreeParams). A cell without FreeParams has every stored value free; one without
// NumParams gives 0, 0.
func Params(c Cell) (stored, free int) {
	n, ok := c.(interface{ NumParams() int })
	if !ok {
		return 0, 0
	}
	stored = n.NumParams()
	if f, ok := c.(interface{ FreeParams() int }); ok {
		return stored, f.FreeParams()
	}
	return stored, stored
}
