// tests/demangle.py builds this with Debian's rustc, once in each Rust
// mangling (legacy, rustc's default, and v0 with -C
// symbol-mangling-version=v0), and profiles it: its hot functions are a
// generic instance in a module, a trait method and a closure.
// Usage: names [iterations] (default 1000000).
mod hot {
    pub struct Acc {
        pub v: u64,
    }

    pub trait Step {
        fn step(&mut self, n: u64) -> u64;
    }

    impl Step for Acc {
        #[inline(never)]
        fn step(&mut self, n: u64) -> u64 {
            for i in 0..n {
                self.v = self.v.wrapping_mul(31).wrapping_add(i);
            }
            self.v
        }
    }

    #[inline(never)]
    pub fn spin<T: Copy + Into<u64>>(x: T, n: u64) -> u64 {
        let mut a: u64 = x.into();
        for i in 0..n {
            a = a.wrapping_mul(6364136223846793005).wrapping_add(i);
        }
        a
    }
}

use hot::Step;

fn main() {
    let n: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(1000000);
    let mut a = hot::Acc { v: 1 };
    let squares = |k: u64| -> u64 {
        let mut s = 0u64;
        for i in 0..k {
            s = s.wrapping_add(i * i);
        }
        s
    };
    // Called through a choice, so that the closure keeps a function of its own.
    let f = if n > 1 { squares } else { |_k: u64| 0 };
    println!("{}", a.step(n) ^ hot::spin(7u32, n) ^ f(n));
}
