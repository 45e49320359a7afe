# Reference numbers from R's party for tests/importance/test_r_party.py. Run from this
# folder: `Rscript make_fixtures.R [DIR]` (Debian: r-cran-party); it writes CSV files
# into DIR (default: this folder). The tests read the checked-in files, so they need no
# R; where Rscript and party are installed, tests/importance/test_r_fixtures.py runs
# this script again and compares.
#
# party's forests are grown from conditional inference trees, which sapwood cannot
# grow, and its permutations are drawn by R, so the fixtures give sapwood everything
# it needs to compute party's numbers itself, on party's own forest:
# - every tree of a cforest (cforest_unbiased: subsamples of 63.2% without
#   replacement), its split points with all 17 digits (x <= split point goes left, as
#   party's C_get_node routes), every node's prediction (class probabilities or
#   mean), and its in-bag weights (0 out of bag);
# - the association test that picks the conditioning sets: ctree's criterion 1 - p of
#   every pair (teststat = "quad", testtype = "Univariate", on all rows, as
#   create_cond_list does) and the sets party took at threshold 0.2;
# - the permutation of every tree's out-of-bag rows that varimp drew for every feature
#   the tree splits on and every repeat: varimp's own loop is run again with party's
#   own functions (create_cond_list, conditional_perm) from the same seed, keeping
#   each permutation, and its importances must be identical() to varimp's;
# - varimp(conditional = TRUE, nperm = 2), and varimp(pre1.0_0 = TRUE): Breiman's
#   permutation of the values, which party's default unconditional varimp is not (it
#   sends the rows at splits on the variable left or right at random, in proportion
#   to the in-bag weights, Hapfelmeier et al. 2014; sapwood does not compute that).
# Feature values lie on a grid of 1/16 so that a float32 copy of X is exact.
suppressMessages(library(party))
args <- commandArgs(trailingOnly = TRUE)
out_dir <- if (length(args)) args[1] else "."
path <- function(name) file.path(out_dir, name)
digits <- function(x) sprintf("%.17g", x)
THRESHOLD <- 0.2
NPERM <- 2

write_numbers <- function(frame, name) {
  frame[] <- lapply(frame, function(column) if (is.double(column)) digits(column) else column)
  write.csv(frame, path(name), row.names = FALSE)
}

# Strobl et al. (2008)'s design, smaller: x1, x2, x3 correlated 0.9 among themselves,
# x4, x5, x6 independent; x3, x5 and x6 have no effect on y.
strobl_data <- function(n) {
  common <- rnorm(n)
  X <- sapply(1:6, function(k) if (k <= 3) sqrt(0.9) * common + sqrt(0.1) * rnorm(n)
                               else rnorm(n))
  X <- as.data.frame(round(X * 16) / 16)
  names(X) <- paste0("x", 1:6)
  X
}

# One party tree as rows in preorder (node 0 is the root; -1: none).
flatten <- function(tree, n_values) {
  rows <- list()
  visit <- function(node) {
    index <- length(rows)
    rows[[index + 1]] <<- FALSE  # reserved: the children come next
    row <- list(node = index, left = -1L, right = -1L, feature = -1L, threshold = NA_real_)
    if (!node[[4]]) {
      split <- node[[5]]
      stopifnot(isTRUE(split[[2]]))  # an ordered (numeric) split: x <= split point
      row$feature <- split[[1]] - 1L
      row$threshold <- split[[3]]
      row$left <- visit(node[[8]])
      row$right <- visit(node[[9]])
    }
    row$weight <- node[[10]]  # in-bag weight the node received
    prediction <- unlist(node[[7]])
    stopifnot(length(prediction) == n_values)
    for (k in seq_len(n_values)) row[[paste0("value", k)]] <- prediction[k]
    rows[[index + 1]] <<- as.data.frame(row)
    index
  }
  visit(tree)
  do.call(rbind, rows)
}

# The cells conditional_perm permutes within: its own `parts` (the interaction of the
# tree's cuts on every conditioning variable it splits on), kept as it returns.
suppressMessages(invisible(trace(
  party:::conditional_perm, print = FALSE, where = asNamespace("party"),
  exit = quote(assign("last_parts", parts, envir = globalenv())))))

# varimp's loop (party 1.3, R/varimp.R) with party's own functions, keeping every
# permutation as positions among the tree's out-of-bag rows: the k-th out-of-bag row
# (in row order) reads the value of the out-of-bag row at position sources[k]; the
# cell of every out-of-bag row (numbered in order of first appearance; one cell when
# nothing is conditioned on); and the tree's increase in error it caused.
replay_varimp <- function(fit, conditional, nperm) {
  input <- fit@data@get("input")
  xnames <- colnames(input)
  inp <- initVariableFrame(input, trafo = NULL)
  y <- fit@responses@variables[[1]]
  error <- if (is.factor(y)) function(x, oob) mean((levels(y)[sapply(x, which.max)] != y)[oob])
           else function(x, oob) mean((unlist(x) - y)[oob]^2)
  perror <- matrix(0, nperm * length(fit@ensemble), length(xnames))
  draws <- NULL
  for (b in seq_along(fit@ensemble)) {
    tree <- fit@ensemble[[b]]
    oob <- fit@weights[[b]] == 0
    eoob <- error(party:::.R_predict(tree, inp, 0, -1L), oob)
    for (j in unique(party:::varIDs(tree))) {
      for (per in 1:nperm) {
        tmp <- inp
        ccl <- party:::create_cond_list(conditional, THRESHOLD, xnames[j], input)
        last_parts <<- rep(1, length(oob))
        perm <- if (length(ccl) < 1) sample(which(oob))
                else party:::conditional_perm(ccl, xnames, input, tree, oob)
        cells <- as.character(last_parts)[oob]
        tmp@variables[[j]][which(oob)] <- tmp@variables[[j]][perm]
        perror[per + (b - 1) * nperm, j] <-
          error(party:::.R_predict(tree, tmp, 0, -1L), oob) - eoob
        draws <- rbind(draws, data.frame(
          tree = b, feature = xnames[j], repeat_ = per,
          increase = perror[per + (b - 1) * nperm, j],
          sources = paste(match(perm, which(oob)) - 1L, collapse = " "),
          cells = paste(match(cells, unique(cells)) - 1L, collapse = " ")))
      }
    }
  }
  list(importance = colMeans(perror), draws = draws)
}

party_case <- function(name, X, y, seed, ntree) {
  data <- data.frame(X, y = y)
  set.seed(seed)
  fit <- cforest(y ~ ., data = data, control = cforest_unbiased(ntree = ntree, mtry = 3))
  classification <- is.factor(y)
  n_values <- if (classification) nlevels(y) else 1
  trees <- do.call(rbind, lapply(seq_len(ntree), function(t)
    data.frame(tree = t, flatten(fit@ensemble[[t]], n_values))))
  importance <- data.frame(feature = names(X))
  draws <- NULL
  for (kind in c("conditional", "unconditional")) {
    conditional <- kind == "conditional"
    nperm <- if (conditional) NPERM else 1
    set.seed(seed + 1)
    expected <- if (conditional) varimp(fit, conditional = TRUE, nperm = nperm)
                else varimp(fit, pre1.0_0 = TRUE, nperm = nperm)
    set.seed(seed + 1)
    replayed <- replay_varimp(fit, conditional, nperm)
    stopifnot(identical(unname(expected), unname(replayed$importance)))
    importance[[kind]] <- unname(expected)
    draws <- rbind(draws, data.frame(kind = kind, replayed$draws))
  }
  association <- NULL
  for (j in names(X)) {
    others <- setdiff(names(X), j)
    ct <- ctree(as.formula(paste(j, "~", paste(others, collapse = "+"))), data = X,
                controls = ctree_control(teststat = "quad", testtype = "Univariate",
                                         stump = TRUE))
    chosen <- party:::create_cond_list(TRUE, THRESHOLD, j, X)
    association <- rbind(association, data.frame(
      feature = j, other = others, criterion = unname(ct@tree$criterion[[2]]),
      conditioned = others %in% chosen))
  }
  names(draws)[names(draws) == "repeat_"] <- "repeat"
  write_numbers(data.frame(X, y = if (classification) as.integer(y) else y),
                paste0(name, "_data.csv"))
  write_numbers(trees, paste0(name, "_trees.csv"))
  write.csv(sapply(fit@weights, identity), path(paste0(name, "_weights.csv")),
            row.names = FALSE)
  write_numbers(draws, paste0(name, "_permutations.csv"))
  write_numbers(association, paste0(name, "_association.csv"))
  write_numbers(importance, paste0(name, "_importance.csv"))
}

set.seed(1)
n <- 120
X <- strobl_data(n)
signal <- 2 * X$x1 + X$x2 + 2 * X$x4
y <- round(signal + rnorm(n), 3)
party_case("party_regression", X, y, seed = 51, ntree = 10)
X <- strobl_data(n)
signal <- 2 * X$x1 + X$x2 + 2 * X$x4
y <- factor(1 + (signal + rnorm(n) > -1) + (signal + rnorm(n) > 1))
party_case("party_classification", X, y, seed = 52, ntree = 10)

cat(R.version.string, "| party", as.character(packageVersion("party")), "\n",
    file = path("VERSIONS"))
