// Package analysis computes what the papers measure rather than train: ‖∂C/∂h_t‖ over
// time, spectra and norms of recurrent matrices. (The finite-difference gradient check and
// the graph size per step of a cell moved to package celltest, the cells' shared test suite.)
package analysis
