"""Small statistics kernel for the ferry throughput analysis (numpy only).

What: ordinary least squares with HC1 (White, heteroscedasticity-robust)
and HC3 (leverage-corrected) covariances, Student-t quantiles obtained by numerically inverting the
regularized incomplete beta function, a vectorised pairs bootstrap for the
simple regression y = b0 + b1*x, and R^2 helpers.

Why: the paper (Section 3.2, Appendix B) asks for OLS + HC1 SEs, 95% CIs and
1000-resample bootstrap CIs.  scipy/statsmodels would pull a large dependency
into a repo whose analysis needs only these few functions, so they are
implemented here and checked against known values in analysis/tests.

The fits use no BLAS or LAPACK (no lstsq, pinv or matmul): OpenBLAS picks
its kernel per CPU (Haswell, SkylakeX, Zen, ...) and splits sums per
thread, so their last bits differ from one machine to the next, and
`make reproduce` would rewrite the checked-in figures and fit tables on
every machine but the one that made them (issue 11).  Here every product
is an IEEE multiply and every sum is math.fsum (exactly rounded), so a fit
has the same bits everywhere.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

# ---------------------------------------------------------------- t quantiles


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta (modified Lentz method)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 2e-16:
            return h
    raise ArithmeticError("incomplete beta continued fraction did not converge")


def betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta I_x(a, b) for a, b > 0 and 0 <= x <= 1."""
    if not 0.0 <= x <= 1.0:
        raise ValueError("x must be in [0, 1]")
    if x in (0.0, 1.0):
        return x
    ln_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                + a * math.log(x) + b * math.log1p(-x))
    front = math.exp(ln_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """CDF of Student's t with df degrees of freedom."""
    if df <= 0:
        raise ValueError("df must be positive")
    tail = 0.5 * betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t >= 0 else tail


def t_ppf(q: float, df: float) -> float:
    """Quantile of Student's t: the t with t_cdf(t, df) == q (bisection).

    Bisection on a monotone CDF to machine precision; closed forms for df 1
    and 2 are used by the tests as independent checks.
    """
    if not 0.0 < q < 1.0:
        raise ValueError("q must be in (0, 1)")
    if df <= 0 or not math.isfinite(df):
        raise ValueError("df must be positive and finite")
    if q == 0.5:
        return 0.0
    if q < 0.5:
        return -t_ppf(1.0 - q, df)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < q:
        lo, hi = hi, hi * 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if t_cdf(mid, df) < q:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


# ---------------------------------------------------------------- OLS + HC1


@dataclass(frozen=True)
class OLSResult:
    """Coefficients, HC1 covariance and residuals of one OLS fit."""

    beta: np.ndarray        # (k,)
    cov_hc1: np.ndarray     # (k, k); NaN when n <= k
    cov_hc3: np.ndarray     # (k, k); NaN when n <= k or a leverage is 1
    fitted: np.ndarray      # (n,)
    resid: np.ndarray       # (n,)
    n: int
    k: int

    @property
    def df(self) -> int:
        return self.n - self.k

    @property
    def se_hc1(self) -> np.ndarray:
        return np.sqrt(np.diag(self.cov_hc1))

    @property
    def se_hc3(self) -> np.ndarray:
        return np.sqrt(np.diag(self.cov_hc3))

    def ci(self, level: float = 0.95, kind: str = "hc1") -> np.ndarray:
        """(k, 2) array of beta -/+ t_{(1+level)/2, n-k} * SE (HC1 or HC3)."""
        if self.df <= 0:
            return np.full((self.k, 2), np.nan)
        tq = t_ppf(0.5 + level / 2.0, self.df)
        se = self.se_hc1 if kind == "hc1" else self.se_hc3
        return np.column_stack([self.beta - tq * se, self.beta + tq * se])


def dot(a, b) -> float:
    """sum(a * b) over all elements, exactly rounded (math.fsum).

    Unlike numpy's dot/matmul (BLAS), the result does not depend on the CPU,
    the BLAS kernel or the number of threads.
    """
    prod = np.asarray(a, dtype=float) * np.asarray(b, dtype=float)
    return math.fsum(prod.ravel().tolist())


def matmul(A, B) -> np.ndarray:
    """A @ B for small 2-D arrays, every entry by dot()."""
    A = np.asarray(A, dtype=float)
    B = np.asarray(B, dtype=float)
    return np.array([[dot(A[i], B[:, j]) for j in range(B.shape[1])]
                     for i in range(A.shape[0])]).reshape(A.shape[0], B.shape[1])


def quad_form(g, M) -> float:
    """g' M g for a vector g and a square matrix M (exactly rounded sum)."""
    g = np.asarray(g, dtype=float)
    return dot(np.outer(g, g), M)


def _householder(A: np.ndarray, k: int) -> np.ndarray:
    """Householder QR on the first k columns of A; the other columns get Q'.

    Applied to [X | y] this leaves R in the top k x k block and Q'y beside
    it, without forming Q.
    """
    A = np.array(A, dtype=float)
    for j in range(k):
        x = A[j:, j]
        alpha = -math.copysign(math.sqrt(dot(x, x)), x[0])
        v = x.copy()
        v[0] -= alpha
        vv = dot(v, v)
        if vv == 0.0:
            continue
        for c in range(j, A.shape[1]):
            A[j:, c] -= (2.0 * dot(v, A[j:, c]) / vv) * v
    return A


def _solve_upper(R: np.ndarray, b: np.ndarray) -> np.ndarray:
    """x with R x = b for upper-triangular R (back substitution)."""
    k = R.shape[0]
    x = np.zeros(k)
    for i in reversed(range(k)):
        x[i] = (b[i] - dot(R[i, i + 1:], x[i + 1:])) / R[i, i]
    return x


def ols(X: np.ndarray, y: np.ndarray) -> OLSResult:
    """OLS of y on the columns of X with HC1 and HC3 robust covariances.

    HC1 = n/(n-k) * (X'X)^-1 X' diag(e_i^2) X (X'X)^-1 (White 1980 with the
    MacKinnon-White small-sample factor).  HC3 replaces e_i^2 by
    e_i^2/(1-h_ii)^2 (h = leverages); with few points and a high-leverage
    large p it is far less anti-conservative than HC1 (Long & Ervin 2000).
    Solved by Householder QR (X = QR, R beta = Q'y, (X'X)^-1 = R^-1 R^-T)
    with exactly rounded sums, so the bits are the same on every machine.
    X must have full column rank.
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    n, k = X.shape
    if n < k:
        raise ValueError(f"need at least {k} points, got {n}")
    A = _householder(np.column_stack([X, y]), k)
    R = np.triu(A[:k, :k])
    d = np.abs(np.diag(R))
    if not np.all(d > n * np.finfo(float).eps * max(float(d.max()), 1e-300)):
        raise ValueError("X does not have full column rank")
    beta = _solve_upper(R, A[:k, k])
    fitted = np.array([dot(row, beta) for row in X])
    resid = y - fitted
    cov = np.full((k, k), np.nan)
    cov3 = np.full((k, k), np.nan)
    if n > k:
        r_inv = np.column_stack([_solve_upper(R, e) for e in np.eye(k)])
        xtx_inv = matmul(r_inv, r_inv.T)
        meat = matmul((X * (resid ** 2)[:, None]).T, X)
        cov = matmul(matmul(xtx_inv, meat), xtx_inv) * (n / (n - k))
        q = matmul(X, r_inv)  # the thin Q: leverages are its squared row norms
        lev = np.array([dot(row, row) for row in q])
        if np.all(lev < 1.0 - 1e-12):
            w = resid ** 2 / (1.0 - lev) ** 2
            cov3 = matmul(matmul(xtx_inv, matmul((X * w[:, None]).T, X)), xtx_inv)
    return OLSResult(beta=beta, cov_hc1=cov, cov_hc3=cov3, fitted=fitted,
                     resid=resid, n=n, k=k)


def linear_fit(x: np.ndarray, y: np.ndarray) -> OLSResult:
    """OLS of y = b0 + b1*x (intercept first)."""
    x = np.asarray(x, dtype=float)
    return ols(np.column_stack([np.ones_like(x), x]), y)


def r_squared(obs: np.ndarray, pred: np.ndarray) -> float:
    """1 - SSE/SST of pred against obs (NaN when SST == 0)."""
    obs = np.asarray(obs, dtype=float)
    pred = np.asarray(pred, dtype=float)
    sst = float(np.sum((obs - obs.mean()) ** 2))
    if sst == 0.0:
        return float("nan")
    return 1.0 - float(np.sum((obs - pred) ** 2)) / sst


# ---------------------------------------------------------------- bootstrap


def bootstrap_linear(x: np.ndarray, y: np.ndarray, n_resamples: int = 1000,
                     seed: int = 20261122) -> np.ndarray:
    """Pairs bootstrap of y = b0 + b1*x; returns an (m, 2) array of (b0, b1).

    Points are resampled with replacement (Appendix B.4).  Resamples whose x
    values are all equal cannot identify a slope and are dropped, so m <=
    n_resamples.  The generator is seeded explicitly, so results are
    deterministic for given inputs.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    n = x.size
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(n_resamples, n))
    xb, yb = x[idx], y[idx]
    xm = xb.mean(axis=1, keepdims=True)
    ym = yb.mean(axis=1, keepdims=True)
    sxx = np.sum((xb - xm) ** 2, axis=1)
    sxy = np.sum((xb - xm) * (yb - ym), axis=1)
    ok = sxx > 1e-12 * max(1.0, float(np.max(np.abs(x))) ** 2)
    b1 = sxy[ok] / sxx[ok]
    b0 = ym[ok, 0] - b1 * xm[ok, 0]
    return np.column_stack([b0, b1])


def percentile_ci(samples: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """Percentile interval of 1-D samples (NaN, NaN) when empty."""
    s = np.asarray(samples, dtype=float)
    s = s[np.isfinite(s)]
    if s.size == 0:
        return (float("nan"), float("nan"))
    lo, hi = np.percentile(s, [50.0 * (1 - level), 50.0 * (1 + level)])
    return (float(lo), float(hi))


def mean_ci(values: np.ndarray, level: float = 0.95) -> tuple[float, float, float]:
    """Mean and its t-interval (mean, lo, hi); lo/hi NaN when n < 2."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return (float("nan"),) * 3
    m = float(v.mean())
    if v.size < 2:
        return (m, float("nan"), float("nan"))
    half = t_ppf(0.5 + level / 2.0, v.size - 1) * float(v.std(ddof=1)) / math.sqrt(v.size)
    return (m, m - half, m + half)
