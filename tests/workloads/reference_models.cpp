#include "reference_models.hpp"

#include <cmath>
#include <limits>
#include <string>

namespace doppler::test {

namespace {

constexpr double kEps = 1e-5, kTheta = 10000;

const Dense& get(const Tensors& in, const std::string& name) {
  return in.at(name);
}

// [m, k] x [k, n].
Dense matmul(const Dense& a, const Dense& b) {
  const auto m = a.shape[0], k = a.shape[1], n = b.shape[1];
  Dense c({m, n});
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t p = 0; p < k; ++p)
      for (std::int64_t j = 0; j < n; ++j) c(i, j) += a(i, p) * b(p, j);
  return c;
}

// Row-major view of [b, s, d] as [b*s, d].
Dense rows(const Dense& x) {
  Dense r({x.shape[0] * x.shape[1], x.shape[2]});
  r.data = x.data;
  return r;
}

Dense unrows(const Dense& r, std::int64_t b, std::int64_t s) {
  Dense x({b, s, r.shape[1]});
  x.data = r.data;
  return x;
}

// RMSNorm over the last axis of [n, d].
Dense rmsnorm(const Dense& x, const Dense& g) {
  const auto n = x.shape[0], d = x.shape[1];
  Dense y(x.shape);
  for (std::int64_t i = 0; i < n; ++i) {
    double ss = 0;
    for (std::int64_t j = 0; j < d; ++j) ss += x(i, j) * x(i, j);
    const double r = 1 / std::sqrt(ss / static_cast<double>(d) + kEps);
    for (std::int64_t j = 0; j < d; ++j)
      y(i, j) = x(i, j) * r * g.data[static_cast<std::size_t>(j)];
  }
  return y;
}

// [n, d] x w[d, h, e] -> [n, h, e] flattened as [n, h*e].
Dense project(const Dense& x, const Dense& w) {
  Dense w2({w.shape[0], w.shape[1] * w.shape[2]});
  w2.data = w.data;
  return matmul(x, w2);
}

// Rotary embedding of q [b*s, h*e] (positions = sequence index).
void rotate(Dense& q, std::int64_t b, std::int64_t s, std::int64_t h, std::int64_t e) {
  for (std::int64_t bi = 0; bi < b; ++bi)
    for (std::int64_t si = 0; si < s; ++si)
      for (std::int64_t hi = 0; hi < h; ++hi)
        for (std::int64_t i = 0; i < e / 2; ++i) {
          const double ang =
              static_cast<double>(si) *
              std::pow(kTheta, -2.0 * static_cast<double>(i) / static_cast<double>(e));
          const std::int64_t row = bi * s + si, c0 = hi * e + 2 * i;
          const double x0 = q(row, c0), x1 = q(row, c0 + 1);
          q(row, c0) = x0 * std::cos(ang) - x1 * std::sin(ang);
          q(row, c0 + 1) = x0 * std::sin(ang) + x1 * std::cos(ang);
        }
}

double silu(double x) {
  return x / (1 + std::exp(-x));
}

}  // namespace

Dense reference_chainmm(const Tensors& in) {
  const Dense cx = matmul(get(in, "C"), matmul(get(in, "D"), get(in, "E")));
  const Dense ab = matmul(get(in, "A"), get(in, "B"));
  Dense y = cx;
  for (std::size_t i = 0; i < y.data.size(); ++i) y.data[i] += ab.data[i];
  return y;
}

Dense reference_ffnn(const Tensors& in) {
  Dense h = matmul(get(in, "x"), get(in, "w1"));
  for (double& v : h.data) v = std::max(v, 0.0);
  Dense z = matmul(h, get(in, "w2"));
  const auto n = z.shape[0], d = z.shape[1];
  for (std::int64_t i = 0; i < n; ++i) {
    double m = -std::numeric_limits<double>::infinity(), sum = 0;
    for (std::int64_t j = 0; j < d; ++j) m = std::max(m, z(i, j));
    for (std::int64_t j = 0; j < d; ++j) sum += std::exp(z(i, j) - m);
    for (std::int64_t j = 0; j < d; ++j) z(i, j) = std::exp(z(i, j) - m) / sum;
  }
  return z;
}

Dense reference_llama_block(const Tensors& in, bool causal) {
  const Dense& x = get(in, "x");
  const auto b = x.shape[0], s = x.shape[1], d = x.shape[2];
  const Dense& wq = get(in, "wq");
  const auto h = wq.shape[1], e = wq.shape[2];
  const Dense xr = rows(x);
  const Dense xn = rmsnorm(xr, get(in, "attn_norm.g"));
  Dense q = project(xn, wq), k = project(xn, get(in, "wk"));
  const Dense v = project(xn, get(in, "wv"));
  rotate(q, b, s, h, e);
  rotate(k, b, s, h, e);
  Dense attn({b * s, h * e});
  const double scale = 1 / std::sqrt(static_cast<double>(e));
  std::vector<double> p(static_cast<std::size_t>(s));
  for (std::int64_t bi = 0; bi < b; ++bi)
    for (std::int64_t hi = 0; hi < h; ++hi)
      for (std::int64_t si = 0; si < s; ++si) {
        const std::int64_t tmax = causal ? si + 1 : s;
        double m = -std::numeric_limits<double>::infinity(), sum = 0;
        for (std::int64_t t = 0; t < tmax; ++t) {
          double acc = 0;
          for (std::int64_t ei = 0; ei < e; ++ei)
            acc += q(bi * s + si, hi * e + ei) * k(bi * s + t, hi * e + ei);
          p[static_cast<std::size_t>(t)] = acc * scale;
          m = std::max(m, acc * scale);
        }
        for (std::int64_t t = 0; t < tmax; ++t) {
          p[static_cast<std::size_t>(t)] = std::exp(p[static_cast<std::size_t>(t)] - m);
          sum += p[static_cast<std::size_t>(t)];
        }
        for (std::int64_t t = 0; t < tmax; ++t)
          for (std::int64_t ei = 0; ei < e; ++ei)
            attn(bi * s + si, hi * e + ei) +=
                p[static_cast<std::size_t>(t)] / sum * v(bi * s + t, hi * e + ei);
      }
  Dense wo({h * e, d});
  wo.data = get(in, "wo").data;  // [h, e, d] row-major = [h*e, d]
  const Dense o = matmul(attn, wo);
  Dense h1 = xr;
  for (std::size_t i = 0; i < h1.data.size(); ++i) h1.data[i] += o.data[i];
  const Dense hn = rmsnorm(h1, get(in, "ffn_norm.g"));
  const Dense a1 = matmul(hn, get(in, "w1")), a3 = matmul(hn, get(in, "w3"));
  Dense m = a1;
  for (std::size_t i = 0; i < m.data.size(); ++i) m.data[i] = silu(a1.data[i]) * a3.data[i];
  const Dense f = matmul(m, get(in, "w2"));
  Dense y = h1;
  for (std::size_t i = 0; i < y.data.size(); ++i) y.data[i] += f.data[i];
  return unrows(y, b, s);
}

Dense reference_llama_layer(const Tensors& in) {
  const Dense y = reference_llama_block(in, true);
  const auto b = y.shape[0], s = y.shape[1], d = y.shape[2];
  const Dense yn = rmsnorm(rows(y), get(in, "final_norm.g"));
  Dense last({b, d});
  for (std::int64_t bi = 0; bi < b; ++bi)
    for (std::int64_t j = 0; j < d; ++j) last(bi, j) = yn(bi * s + s - 1, j);
  const Dense logits = matmul(last, get(in, "w_vocab"));
  Dense out({b, 1, logits.shape[1]});
  out.data = logits.data;
  return out;
}

Dense reference_llama_model(const Tensors& in, int layers) {
  Dense x = get(in, "embedding");
  for (int i = 0; i < layers; ++i) {
    // Block i is a llama-block (with the causal mask) whose weights are layers.<i>.<name>.
    const std::string prefix = "layers." + std::to_string(i) + ".";
    Tensors block = {{"x", x}};
    for (const char* w : {"attn_norm.g", "wq", "wk", "wv", "wo", "ffn_norm.g", "w1", "w2", "w3"})
      block[w] = get(in, prefix + w);
    x = reference_llama_block(block, true);
  }
  const auto b = x.shape[0], s = x.shape[1];
  const Dense logits = matmul(rmsnorm(rows(x), get(in, "final_norm.g")), get(in, "w_vocab"));
  return unrows(logits, b, s);
}

double dot(const Dense& a, const Dense& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.data.size(); ++i) s += a.data[i] * b.data[i];
  return s;
}

}  // namespace doppler::test
