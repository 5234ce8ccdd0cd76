// Package claims holds the papers' claims as data and judges them against the runs: one
// function, [Judge], turns a claim and the logs of its runs into a [Verdict] (an [Outcome], the
// statistics behind it and the reason in words). The command line's reports, docs/verdicts.json
// and the notebooks all call it, so that a claim reads the same everywhere.
//
// # The rules
//
// The rules are stated once, in [Rules], which every report prints in its header:
//
//  1. Horizon. A claim names its horizon: a number of steps, or a budget of seconds of training
//     (each run's replicas trained at once; the steps it buys at the run's measured speed,
//     runs.StepSeconds). Every run of the claim is judged there, its log cut at the horizon. A
//     run short of it (a seed that has neither reached it nor diverged) leaves the claim open,
//     with the hours it still needs at its measured speed (a run not started or too new to
//     time, on a budget of seconds: what is left of the budget). Seconds are a machine's: on a
//     budget of seconds, a rank comparison (rules 5 and 6) counts only between two runs timed
//     on one machine; a claim whose comparisons are otherwise passed stays open while one pair
//     was timed on two. The verdict names the machines.
//  2. Final loss. A seed's final loss is the median of its last [FinalK] held-out evaluations at
//     or before the horizon (+Inf for a seed that diverged); a run's final is the median over its
//     seeds, reported with the min and max.
//  3. Levels ("go well below the baseline"). A run is below its line when its final median is
//     under (1 − m)·line, m = [Margin]: at least [MinMargin], and at least three standard errors
//     of that median for a model sitting at the line, from the relative standard error of one
//     held-out evaluation ([EvalRSE]: the per-sequence loss's coefficient of variation over √N
//     for N held-out sequences) over √seeds times √(π/2) (a median's efficiency). A run "blows up"
//     (is above its line) when its final median is over (1 + m)·line; a seed that diverged counts +Inf.
//  4. Thresholds ("solves", "perfect performance", "never able to find the solution"). A run
//     solves the task when its final median is under the solved line (runs.SolvedLoss: a tenth of
//     the reference on copy, an MSE of 0.01 on adding). A run that should never solve it fails
//     that when any seed reaches the line by the horizon (steps to the line, rule 5).
//  5. Speed ("efficiently", "only after a very long time"). A seed's steps to the line are the
//     first evaluation step at which the median of its last [FinalK] evaluations (all so far, when
//     fewer) is under the solved line, on the evaluation steps all the compared runs share (the
//     coarsest run's interval); a seed that has not reached it at the horizon is censored there.
//     A horizon in steps is required: runs cut at different steps share no censoring time. Faster means: the runs that should be fast reach the line in at least half
//     their seeds, and a one-sided Mann–Whitney test over the seeds (censored times tied with each
//     other and after every observed time: Gehan's form of the test) gives p < [Alpha] against
//     each slow run, whose median steps to the line are also at least [FasterRatio] times the fast
//     run's (or not reached: "only after a very long time, or not at all").
//  6. Comparisons of levels ("achieves lower error") compare the seeds' final losses (rule 2), and
//     comparisons of accuracies the seeds' accuracies, by the same one-sided test at [Alpha].
//     Accuracies are on the task's whole test split (pixel MNIST's test images), each seed scored
//     from its checkpoint at the horizon (runs.TestFile, `longmemory eval -save`, which the sweep
//     runs there): a run at the horizon not yet scored leaves the claim open; a seed that
//     diverged scores 0.
//  7. Trend. A seed is still falling when the Theil–Sen slope of its log-loss over the second
//     half of the judged window (the median of the pairwise slopes, which a spike cannot move)
//     takes more than [FallingDrop] off its loss across that half (a seed whose final is under the
//     solved line is not counted). Verdicts report it; they are decided at the horizon all the same.
//
// A claim is reproduced when every run meets its side of the test, not reproduced when the
// runs are at the horizon and one does not (or as soon as a run at the horizon fails its side,
// its own test or a comparison with a run of the other side also at the horizon: those still
// short of it cannot change that), open while a
// run is short of the horizon (or, on accuracies, not scored there), and not run when a run has no directory yet. Setting variants and ablations are judged by the same
// rules into their own table, outside the claims' tally.
package claims
