# Reference numbers from R for tests/importance/test_r_randomforest.py and
# tests/importance/test_r_ranger.py. Run from this folder: `Rscript make_fixtures.R [DIR]`
# (Debian: r-cran-randomforest, r-cran-ranger); it writes CSV files into DIR (default:
# this folder). The tests read the checked-in files, so they need no R; where Rscript
# is installed, tests/importance/test_r_fixtures.py runs this script again and
# compares.
#
# R's random streams are not numpy's, so the fixtures give sapwood what it needs to
# compute R's numbers itself:
# - the forests' own trees (getTree / treeInfo), split points with all 17 digits, and
#   their in-bag counts (keep.inbag = TRUE): importances that depend on the trees only
#   (randomForest's type = 2, ranger's "impurity") are then deterministic;
# - for randomForest, the state of R's Mersenne-Twister where each tree's permutations
#   start, so that Python can replay them (rf.c, permuteOOB: k = (int) last *
#   unif_rand(), swap, last--): its type = 1 importance, scaled or not, per class too,
#   is then deterministic as well;
# - ranger's permutation importance (its permutations come from C++'s std::shuffle and
#   cannot be replayed) on a forest whose trees and in-bag counts are given, to compare
#   in distribution; and ranger's Janitza p-values with the importances they came from.
# Feature values lie on a grid of 1/16 so that sapwood's float32 copy of X is exact.
suppressMessages({library(randomForest); library(ranger)})
args <- commandArgs(trailingOnly = TRUE)
out_dir <- if (length(args)) args[1] else "."
path <- function(name) file.path(out_dir, name)
digits <- function(x) sprintf("%.17g", x)

grid_data <- function(n, p) {
  X <- as.data.frame(matrix(round(rnorm(n * p) * 16) / 16, n, p))
  names(X) <- paste0("x", seq_len(p))
  X
}

write_numbers <- function(frame, name) {
  frame[] <- lapply(frame, function(column) if (is.double(column)) digits(column) else column)
  write.csv(frame, path(name), row.names = FALSE)
}

# randomForest's OOB error step (rf.c, oob()) breaks ties of the cumulative votes with
# unif_rand() between growing a tree and permuting its OOB rows: for every row out of
# bag so far, one draw per class whose vote share reaches the running maximum.
oob_tie_draws <- function(votes, out, cutoff) {
  draws <- 0
  for (n in which(out > 0)) {
    best <- 0
    for (j in seq_along(cutoff)) {
      share <- (votes[n, j] / out[n]) / cutoff[j]
      if (share > best) best <- share
      if (share == best) draws <- draws + 1
    }
  }
  draws
}

advance <- function(state, draws) {
  assign(".Random.seed", state, envir = globalenv())
  if (draws > 0) runif(draws)
  get(".Random.seed", envir = globalenv())
}

randomforest_case <- function(name, X, y, seed, ntree) {
  set.seed(seed)
  fit <- randomForest(X, y, ntree = ntree, importance = TRUE, keep.inbag = TRUE)
  classification <- is.factor(y)
  n <- nrow(X)
  if (classification) {
    individual <- predict(fit, X, predict.all = TRUE)$individual
    votes <- matrix(0, n, nlevels(y)); out <- numeric(n)
  }
  # Grow the forest again one tree at a time, each from where the forest's stream is
  # when that tree starts: a one-tree forest without importance stops after growing
  # (and, for classification, its own OOB tie draws, one per class up to the predicted
  # one for every OOB row); counting its draws gives where tree t's permutations start.
  set.seed(seed)
  states <- matrix(0L, length(.Random.seed), ntree)
  trees <- NULL
  for (t in seq_len(ntree)) {
    start <- get(".Random.seed", envir = globalenv())
    one <- randomForest(X, y, ntree = 1, keep.inbag = TRUE)
    stopifnot(identical(getTree(one, 1), getTree(fit, t)),
              identical(unname(one$inbag[, 1]), unname(fit$inbag[, t])))
    grown <- get(".Random.seed", envir = globalenv())
    assign(".Random.seed", start, envir = globalenv())
    used <- 0
    while (!identical(get(".Random.seed", envir = globalenv()), grown)) {
      runif(1); used <- used + 1
      stopifnot(used < 1e6)
    }
    oob <- fit$inbag[, t] == 0
    if (classification) {
      code <- match(individual[, t], levels(y))
      own <- sum(code[oob])
      votes[cbind(which(oob), code[oob])] <- votes[cbind(which(oob), code[oob])] + 1
      out[oob] <- out[oob] + 1
      forest <- oob_tie_draws(votes, out, fit$forest$cutoff)
    } else {
      own <- 0; forest <- 0
    }
    states[, t] <- advance(start, used - own + forest)
    tree <- as.data.frame(getTree(fit, t), check.names = FALSE)
    n_used <- length(unique(tree[["split var"]][tree[["status"]] != -1]))
    advance(states[, t], sum(oob) * n_used)
    trees <- rbind(trees, data.frame(tree = t, tree, check.names = FALSE))
  }
  write_numbers(data.frame(X, y = if (classification) as.integer(y) else y),
                paste0(name, "_data.csv"))
  write_numbers(trees, paste0(name, "_trees.csv"))
  write.csv(unname(fit$inbag), path(paste0(name, "_inbag.csv")), row.names = FALSE)
  write.csv(states, path(paste0(name, "_rngstate.csv")), row.names = FALSE)
  raw <- as.data.frame(fit$importance, check.names = FALSE)
  sd <- as.data.frame(fit$importanceSD, check.names = FALSE)
  names(sd) <- paste0("SD ", names(raw)[seq_len(ncol(sd))])
  scaled <- as.data.frame(randomForest::importance(fit, scale = TRUE), check.names = FALSE)
  names(scaled) <- paste0("scaled ", names(scaled))
  write_numbers(data.frame(raw, sd, scaled, check.names = FALSE),
                paste0(name, "_importance.csv"))
}

ranger_case <- function(name, X, y, seed, trees) {
  data <- data.frame(X, y = y)
  grow <- function(importance, scale = FALSE) ranger(
    dependent.variable.name = "y", data = data, num.trees = trees, importance = importance,
    scale.permutation.importance = scale, keep.inbag = TRUE, num.threads = 1, seed = seed)
  impurity <- grow("impurity")
  permutation <- grow("permutation")
  scaled <- grow("permutation", TRUE)
  # The same seed grows the same trees whatever the importance: one set of trees
  # serves all three.
  info <- do.call(rbind, lapply(seq_len(trees), function(t)
    data.frame(tree = t, treeInfo(impurity, t))))
  for (other in list(permutation, scaled)) {
    stopifnot(identical(info[-ncol(info)], do.call(rbind, lapply(seq_len(trees), function(t)
      data.frame(tree = t, treeInfo(other, t))))[-ncol(info)]),
      identical(impurity$inbag.counts, other$inbag.counts))
  }
  # Leaf predictions from the forest itself: ranger 0.14.1's treeInfo() labels the classes
  # by their order of first appearance instead of their codes (ranger issue #626, fixed
  # after the 0.14.1 release); a classification leaf's split value is the class code.
  info$prediction <- ifelse(info$terminal, unlist(impurity$forest$split.values), NA)
  info$splitvarName <- NULL
  write_numbers(data.frame(X, y = if (is.factor(y)) as.integer(y) else y),
                paste0(name, "_data.csv"))
  write_numbers(info, paste0(name, "_trees.csv"))
  write.csv(do.call(cbind, impurity$inbag.counts), path(paste0(name, "_inbag.csv")),
            row.names = FALSE)
  write_numbers(data.frame(impurity = impurity$variable.importance,
                           permutation = permutation$variable.importance,
                           scaled = scaled$variable.importance),
                paste0(name, "_importance.csv"))
}

# randomForest: three classes, and a regression with an interaction.
set.seed(1)
n <- 300
X <- grid_data(n, 5)
y <- factor(1 + (X$x1 + 0.5 * rnorm(n) > 0) + (X$x2 + 0.5 * rnorm(n) > 0.5))
randomforest_case("randomforest_classification", X, y, seed = 21, ntree = 15)
X <- grid_data(n, 5)
y <- round(X$x1 + 2 * X$x2 * X$x3 + 0.5 * rnorm(n), 3)
randomforest_case("randomforest_regression", X, y, seed = 22, ntree = 15)

# ranger: the same kinds of data, 50 trees, ranger's defaults otherwise.
X <- grid_data(n, 5)
y <- factor(1 + (X$x1 + 0.5 * rnorm(n) > 0) + (X$x2 + 0.5 * rnorm(n) > 0.5))
ranger_case("ranger_classification", X, y, seed = 31, trees = 50)
X <- grid_data(n, 5)
y <- round(X$x1 + 2 * X$x2 * X$x3 + 0.5 * rnorm(n), 3)
ranger_case("ranger_regression", X, y, seed = 32, trees = 50)

# Janitza's p-values: corrected impurity importance of 5 informative and 195 noise
# features (ranger warns below 100 negative importances; so do not give it fewer).
X <- grid_data(200, 200)
y <- factor(as.integer(rowSums(X[, 1:5]) + rnorm(200) > 0))
fit <- ranger(dependent.variable.name = "y", data = data.frame(X, y = y), num.trees = 200,
              importance = "impurity_corrected", num.threads = 1, seed = 41)
pvalues <- suppressWarnings(importance_pvalues(fit, method = "janitza"))
write_numbers(data.frame(importance = pvalues[, "importance"], pvalue = pvalues[, "pvalue"]),
              "ranger_janitza.csv")

# AIR (ranger's "impurity_corrected"): it depends on ranger's shadow permutation, which
# its output does not keep, so it is compared in distribution: the mean and SD over 20
# seeds of a 100-tree forest, mtry floor(sqrt(10)) = 3, trees grown to purity, on 3
# informative and 7 noise features.
X <- grid_data(n, 10)
signal <- X$x1 + X$x2 + 0.5 * X$x3
targets <- list(classification = factor(as.integer(signal + rnorm(n) > 0)),
                regression = round(signal + rnorm(n), 3))
air <- NULL
for (task in names(targets)) {
  draws <- sapply(1:20, function(seed) ranger(
    dependent.variable.name = "y", data = data.frame(X, y = targets[[task]]),
    num.trees = 100, importance = "impurity_corrected", min.node.size = 1,
    num.threads = 1, seed = seed)$variable.importance)
  air <- rbind(air, data.frame(task = task, feature = rownames(draws),
                               mean = rowMeans(draws), sd = apply(draws, 1, sd)))
}
write_numbers(data.frame(X, y_classification = as.integer(targets$classification),
                         y_regression = targets$regression), "ranger_air_data.csv")
write_numbers(air, "ranger_air.csv")

cat(R.version.string, "| randomForest", as.character(packageVersion("randomForest")),
    "| ranger", as.character(packageVersion("ranger")), "\n", file = path("VERSIONS"))
