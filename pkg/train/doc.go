// Package train trains the project's recurrent cells (rnn.Cell) on its tasks with the
// papers' settings: RMSProp (Arjovsky et al. §4; Henaff et al. §4), element-wise and
// global-norm gradient clipping, and exact backpropagation through time over fixed-size
// chunks of the sequence (package seq: its Walker, with the loss and the gradient of every
// trainable variable as hooks), so that graph size and build time do not grow with T.
package train
