// tests/demangle.py builds this with g++ and profiles it: its hot
// functions have the kinds of names C++ mangles (a namespace, template
// instances, an overload, an operator, a lambda, a standard container
// parameter), each non-leaf and never inlined, so every one shows in a
// frame-pointer profile under its own name.  Usage: names [millions]
// (default 400: about half a second).
#include <cstdlib>
#include <vector>

static volatile unsigned long sink;

// Not a leaf: GCC gives leaf functions no frame.
__attribute__((noipa)) static void mark()
{
	sink = sink + 1;
}

static unsigned long churn(unsigned long x, unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

namespace hot {

template <typename T> __attribute__((noipa)) T spin(T seed, unsigned long n)
{
	mark();
	return static_cast<T>(churn(static_cast<unsigned long>(seed), n));
}

__attribute__((noipa)) unsigned long work(int seed, unsigned long n)
{
	mark();
	return churn(static_cast<unsigned long>(seed), n);
}

__attribute__((noipa)) unsigned long work(double seed, unsigned long n)
{
	mark();
	return churn(static_cast<unsigned long>(seed), n);
}

__attribute__((noipa)) unsigned long total(const std::vector<unsigned long> &v, unsigned long n)
{
	mark();
	return churn(v.empty() ? 0 : v[0], n);
}

struct Vec {
	unsigned long x;
	Vec operator+(const Vec &o) const;
};

__attribute__((noipa)) Vec Vec::operator+(const Vec &o) const
{
	mark();
	return Vec{churn(x ^ o.x, sink)};
}

} // namespace hot

int main(int argc, char **argv)
{
	unsigned long n = (argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 400) * 1000000UL / 6;
	auto lambda = [](unsigned long k) __attribute__((noipa)) {
		mark();
		return churn(k, k);
	};
	std::vector<unsigned long> v{3};
	unsigned long r = hot::spin<int>(1, n) ^ hot::spin<unsigned long>(2, n) ^ hot::work(3, n) ^
			  hot::work(4.0, n) ^ hot::total(v, n) ^ lambda(n);
	sink = n;
	r ^= (hot::Vec{r} + hot::Vec{5}).x;
	return r == 42 ? 1 : 0;
}
