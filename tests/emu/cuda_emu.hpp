// A CPU emulator for the CUDA subset the reduction kernels use, to test their logic without a
// GPU (tests/tests/emulated_kernels.rs). Not a simulator of timing or of the memory model: it
// runs one block at a time, each CUDA thread as a fiber on one OS thread, switching only at
// synchronisation points. What it does check:
//   - __syncthreads / __syncthreads_or / __syncwarp and every warp collective (shuffles,
//     ballots) as real barriers: a thread waits until all threads of its block (or warp) arrive;
//     a barrier that some thread never reaches is reported as a deadlock, not hung on;
//   - warp collectives exchange values through per-thread slots, so a lane reads what the
//     source lane passed to that same collective; lanes at different kinds of collective (a
//     __syncwarp against a shuffle, a vote, a reduction) are reported;
//   - dynamic shared memory is filled with 0xA5 before every block (no reliance on zeroes);
//   - between two synchronisation points the fibers run one after another, in increasing or
//     (emu::reverse_order) decreasing thread order: a read that a missing barrier leaves
//     unordered with another thread's write sees the old value under one of the two orders;
//     (emu::eager_order) the first runnable fiber runs after every switch, so that warps run
//     ahead of each other between block barriers;
//   - named barriers (bar.sync 1, count: the threads beside a producer warp) likewise;
//   - cp.async (kernels/seg_merge.cu) as bulk copies: a copy poisons its destination and lands
//     with the phase of the mbarrier the thread's next cp.async.mbarrier.arrive goes to (or at
//     its cp.async.wait_all); shared addresses are offsets into the dynamic shared memory;
//   - mbarriers and bulk copies (kernels/pipe.cuh): a bulk copy poisons its destination when
//     issued and lands only when a thread waits on its barrier after every expected arrival, so a
//     read before the wait reads poison; after the arrival that completes a phase the other
//     fibers run before the arriving one goes on, so a read of a stage after its release meets
//     the refill's poison; a thread spinning on an mbarrier is not resumed until another fiber
//     has changed something (an arrival, a barrier), and a block where only spinning fibers
//     remain is reported as a deadlock;
//   - blocks run in index order; grid-wide protocols that only need "the last block to
//     finish" (atomic tickets) work, and so does the scans' look-back, whose tiles (taken from a
//     counter in block order) find every earlier tile finished; a wait for a later block is
//     reported as a deadlock. Launches whose blocks never wait for each other (a ticket picks
//     the last) run their blocks from the last one down under the reverse order (block_at), so
//     that the ticket's last block is block 0 there and the highest block elsewhere.
// Static __shared__ variables are function statics, shared by the block's fibers; the test
// side follows each declaration with emu_shared_fresh (tests/src/emu/mod.rs), so that the first
// fiber of a block to pass it fills the variable with 0xA5: a read before any write of this
// block sees poison, never zeroes or the block before's values.
// A macro guard, not #pragma once: the tests force-include a precompiled copy kept elsewhere,
// and a kernel's own #include of the copy beside it must then add nothing.
#ifndef REDUCE_CUDA_EMU_HPP
#define REDUCE_CUDA_EMU_HPP
#if !defined(__x86_64__)
#include <ucontext.h>
#endif

// <cmath>: the CUDA math functions generated code calls (fmaf, fmaxf, sqrt, ...), on the host.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

#define __device__
#define __host__
#define __global__
#define __forceinline__ inline
#define __noinline__
#define __shared__ static
#define __launch_bounds__(...)

struct uint4 {
    unsigned int x, y, z, w;
} __attribute__((aligned(16)));
struct uint2 {
    unsigned int x, y;
} __attribute__((aligned(8)));
inline uint4 make_uint4(unsigned int x, unsigned int y, unsigned int z, unsigned int w) { return uint4{x, y, z, w}; }
struct ulonglong2 {
    unsigned long long x, y;
} __attribute__((aligned(16)));

struct emu_dim3 {
    unsigned int x, y, z;
};

namespace emu {

// A fiber's saved state and the switch between two. On x86-64: the callee-saved registers on
// the fiber's own stack and its stack pointer (swapcontext also saves and restores the signal
// mask, a system call per switch: most of an emulated run's time); elsewhere, ucontext.
#if defined(__x86_64__)
extern "C" void emu_switch(void** save_sp, void* load_sp);
asm(R"(
    .pushsection .text
    .globl emu_switch
    .type emu_switch, @function
emu_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size emu_switch, .-emu_switch
    .popsection
)");
struct Context {
    void* sp = nullptr;
};
inline void switch_to(Context& from, Context& to) { emu_switch(&from.sp, to.sp); }
// A context that starts `entry` (which never returns) on `stack`: at the stack's 16-byte
// aligned top, entry's (absent) return address, then entry itself for the switch's `ret`, then
// the six registers the switch pops.
inline void start(Context& c, char* stack, std::size_t size, void (*entry)()) {
    void** p = reinterpret_cast<void**>(reinterpret_cast<std::uintptr_t>(stack + size) & ~std::uintptr_t(15));
    *--p = nullptr;
    *--p = reinterpret_cast<void*>(entry);
    for (int i = 0; i < 6; ++i) *--p = nullptr;
    c.sp = p;
}
#else
struct Context {
    ucontext_t uc;
};
inline void switch_to(Context& from, Context& to) { swapcontext(&from.uc, &to.uc); }
inline void start(Context& c, char* stack, std::size_t size, void (*entry)()) {
    getcontext(&c.uc);
    c.uc.uc_stack.ss_sp = stack;
    c.uc.uc_stack.ss_size = size;
    c.uc.uc_link = nullptr;
    makecontext(&c.uc, entry, 0);
}
#endif

// Fiber stacks, allocated once and reused by every block (neither zeroed nor freed: zeroing
// fresh stacks for every block was most of a run's time). Their AddressSanitizer state is reset
// when a fiber starts (frames of the fibers before are gone).
constexpr std::size_t kStack = 1 << 18;
inline char* fiber_stack(unsigned int t) {
    static std::vector<std::unique_ptr<char[]>> stacks;
    while (stacks.size() <= t) stacks.emplace_back(new char[kStack]);
#if defined(__SANITIZE_ADDRESS__)
    __asan_unpoison_memory_region(stacks[t].get(), kStack);
#endif
    return stacks[t].get();
}

struct Fiber {
    Context ctx;
    unsigned int tid;
    int barrier;                   // the barrier it waits on, -1: runnable
    unsigned long long generation; // that barrier's generation when it arrived
    bool done;
    bool yielded;                  // spun on an mbarrier: not resumed until another fiber moved on
    bool preempted;                // resumed only once no other fiber can run (preempt)
    unsigned long long yield_epoch;  // the block's epoch when it spun
    unsigned long long collectives;  // warp collectives passed: their slots' bank alternates
};

// What a thread arrives at a barrier for: the barrier itself, or a warp collective of one kind.
// On a GPU a __syncwarp, a shuffle, a vote and a warp reduction are different instructions that
// never meet each other: lanes of one warp at two kinds is a bug (a collective under a branch
// some lanes skip), reported here instead of exchanging values across them.
enum class Meet { Barrier, Shuffle, Vote, Reduce };
inline const char* meet_name(Meet m) {
    return m == Meet::Barrier ? "__syncwarp" : m == Meet::Shuffle ? "a shuffle" : m == Meet::Vote ? "a vote" : "a reduction";
}

struct Block {
    unsigned int threads;
    emu_dim3 block_idx, grid_dim;
    std::vector<Fiber> fibers;
    Context scheduler;
    Fiber* current;
    // barrier 0: the block; barrier 1 + w: warp w
    std::vector<unsigned int> arrived;
    std::vector<unsigned long long> generation;
    std::vector<Meet> meets;                // what the threads at each barrier arrived for
    std::vector<unsigned long long> slots;  // one exchange slot per thread (block-wide votes)
    std::vector<unsigned long long> lanes;  // warp collectives: two banks of one slot per thread
    unsigned long long epoch = 0;           // switches back from a fiber that did not spin
    unsigned int finished = 0;              // fibers done
    // For the eager order's scan (run_block): the lowest thread a barrier released since the
    // scheduler last looked, and the lowest thread that ever spun on an mbarrier.
    unsigned int released_low = ~0u, spun_low = ~0u;
    std::function<void()> body;
};

inline bool& reverse_order() {
    static bool reverse = false;
    return reverse;
}
// The k-th block to run of `grid`: in index order, or from the last down under the reverse
// order, for launches whose blocks never wait for each other.
inline unsigned int block_at(unsigned int k, unsigned int grid) {
    return reverse_order() ? grid - 1 - k : k;
}
// Eager order: after every switch the scheduler resumes the first runnable fiber (in the order
// above) instead of going on round the block, so a warp released from a collective runs ahead
// of the later warps up to its next wait: a write after a warp collective that a missing block
// barrier leaves unordered with a later warp's read (which round-robin sweeps always run first)
// lands before that read.
inline bool& eager_order() {
    static bool eager = false;
    return eager;
}

// The start of every main: argv[1] the cases to read, argv[2] the results to write, argv[3] the
// order of the fibers ("reverse", "eager", else increasing). False (the main returns 2) on a
// wrong command line or a file that does not open.
inline bool open_files(int argc, char** argv, std::FILE** in, std::FILE** res) {
    if (argc != 4) return false;
    reverse_order() = std::strcmp(argv[3], "reverse") == 0;
    eager_order() = std::strcmp(argv[3], "eager") == 0;
    *in = std::fopen(argv[1], "rb");
    *res = std::fopen(argv[2], "wb");
    return *in && *res;
}

// n items of T read from `in` into `storage` (allocated here, exactly) at `items`, `shift` bytes
// past a 16-byte boundary and at the end of the allocation, so that AddressSanitizer reports
// any read past them, and before them where it can (the whole 8-byte granules of the `shift`
// bytes before them are poisoned); false when the file ends early (or the allocator's block is
// not 16-byte aligned).
template <typename T>
bool read_items(std::FILE* in, unsigned long long n, size_t shift, std::vector<unsigned char>& storage,
                T*& items) {
    storage = std::vector<unsigned char>(shift + n * sizeof(T));
    items = reinterpret_cast<T*>(storage.data() + shift);
#if defined(__SANITIZE_ADDRESS__)
    __asan_poison_memory_region(storage.data(), shift & ~size_t(7));
#endif
    return reinterpret_cast<std::uintptr_t>(storage.data()) % 16 == 0 &&
           std::fread(items, sizeof(T), n, in) == n;
}

// One case's results of a segmented launch, as tests/src/emu/mod.rs's segmented_results reads
// them: the status the launch handed out, whether it ended well (1, else 0), the segments'
// values.
template <typename T>
void write_segmented_result(std::FILE* res, unsigned long long status, unsigned long long ok,
                            const std::vector<T>& out) {
    std::fwrite(&status, 8, 1, res);
    std::fwrite(&ok, 8, 1, res);
    std::fwrite(out.data(), sizeof(T), out.size(), res);
}

inline Block*& block() {
    static Block* b = nullptr;
    return b;
}
inline Fiber& self() { return *block()->current; }

inline void wait_at(int id, unsigned int count, Meet meet = Meet::Barrier) {
    Block& b = *block();
    Fiber& f = self();
    ++b.epoch;  // a state change: spinning fibers may look again
    if (b.arrived[id] == 0) {
        b.meets[id] = meet;
    } else if (b.meets[id] != meet) {
        std::fprintf(stderr, "emu: thread %u of block %u is at %s where its warp's lanes before it are at %s\n",
                     f.tid, b.block_idx.x, meet_name(meet), meet_name(b.meets[id]));
        std::abort();
    }
    if (++b.arrived[id] == count) {  // the last to arrive releases the others
        b.arrived[id] = 0;
        ++b.generation[id];
        // a warp barrier's waiters are its warp's threads; the block's and named ones, any
        const unsigned int first = id >= 1 && id <= (int)((b.threads + 31) / 32) ? 32u * (unsigned)(id - 1) : 0u;
        if (first < b.released_low) b.released_low = first;
        return;
    }
    f.barrier = id;
    f.generation = b.generation[id];
    switch_to(f.ctx, b.scheduler);
}
// Named barrier `id` (bar.sync id, count: the tile pipeline's R_BLOCK threads beside its producer
// warp): released when `count` threads have arrived.
constexpr int kNamedBarriers = 16;
inline int named_index(unsigned int id) { return 1 + (int)((block()->threads + 31) / 32) + (int)id; }
inline void named_sync(unsigned int id, unsigned int count) { wait_at(named_index(id), count); }

// Runs the other fibers, this one staying runnable once any state changed (a spin-wait's turn).
inline void yield() {
    Fiber& f = self();
    f.barrier = -1;
    f.yielded = true;
    f.yield_epoch = block()->epoch;
    if (f.tid < block()->spun_low) block()->spun_low = f.tid;
    switch_to(f.ctx, block()->scheduler);
}
// Lets every other fiber run as far as it can before this one goes on (it stays runnable, and
// is resumed once no other fiber can run): what other threads may do between this thread's step
// and its next one on a GPU — a producer refilling the stage this thread has just released —
// then happens first, in every fiber order.
inline void preempt() {
    Fiber& f = self();
    f.barrier = -1;
    f.yielded = false;
    f.preempted = true;
    switch_to(f.ctx, block()->scheduler);
}
inline unsigned int lane() { return self().tid % 32; }
inline unsigned int warp_base() { return self().tid - lane(); }
inline void warp_sync(Meet meet = Meet::Barrier) { wait_at(1 + (int)(self().tid / 32), 32, meet); }
inline void block_sync() { wait_at(0, block()->threads); }

template <class T>
inline unsigned long long to_slot(T v) {
    static_assert(sizeof(T) <= 8, "exchange slots hold 8 bytes");
    unsigned long long s = 0;
    std::memcpy(&s, &v, sizeof(T));
    return s;
}
template <class T>
inline T from_slot(unsigned long long s) {
    T v;
    std::memcpy(&v, &s, sizeof(T));
    return v;
}
// A warp collective: every lane passes `v` and, once all 32 have, reads its warp's 32 slots
// (the pointer returned, valid until the lane's next collective). One rendezvous is enough:
// the slots' two banks alternate, and a lane writes a bank again only two collectives later,
// after the whole warp arrived at the one between, that is after every lane read this one.
template <class T>
inline const unsigned long long* warp_collective(T v, Meet meet) {
    Block& b = *block();
    Fiber& f = self();
    unsigned long long* bank = b.lanes.data() + (f.collectives++ & 1) * b.threads;
    bank[f.tid] = to_slot(v);
    warp_sync(meet);
    return bank + warp_base();
}
// Every lane of the warp passes `v`; returns what lane `src` passed (its own when out of range).
template <class T>
inline T warp_exchange(T v, int src) {
    const unsigned long long* slots = warp_collective(v, Meet::Shuffle);
    return (src >= 0 && src < 32) ? from_slot<T>(slots[src]) : v;
}

extern "C" inline void fiber_entry() {
    block()->body();
    self().done = true;
    ++block()->finished;
    // back to the scheduler; this fiber is never resumed
    switch_to(self().ctx, block()->scheduler);
}

// Fills `bytes` at `p` with 0xA5, the emulator's poison: what a kernel reads there before it
// writes it is garbage, never zeroes or an earlier launch's values.
inline void poison(void* p, std::size_t bytes) { std::memset(p, 0xA5, bytes); }
template <class T>
inline void poison(std::vector<T>& v) {
    poison(static_cast<void*>(v.data()), v.size() * sizeof(T));
}

// One case of the segmented mains that share a format (SegShuffle's, SegMerge's, the portable
// kernel's): a header of seven words (n, segments, index_len, grid, a word of the kernel's own,
// dynamic_smem, check), then n items, placed by read_items `shift` bytes past a 16-byte boundary,
// and index_len layout entries; `out` holds `segments` poisoned values (never read).
template <typename In, typename Idx, typename Out>
struct SegCase {
    unsigned long long n, segments, grid, own, smem, check;
    std::vector<unsigned char> storage;
    In* items;
    std::vector<Idx> index;
    std::vector<Out> out;
    // Reads the next case: 1, or 0 at the end of the file, or -1 when it ends inside a case.
    int read(std::FILE* in, std::size_t shift) {
        unsigned long long h[7];
        if (std::fread(h, 8, 7, in) != 7) return 0;
        n = h[0], segments = h[1], grid = h[3], own = h[4], smem = h[5], check = h[6];
        index.assign(h[2], Idx{});
        if (!read_items(in, n, shift, storage, items)) return -1;
        if (std::fread(index.data(), sizeof(Idx), index.size(), in) != index.size()) return -1;
        out.assign(segments, Out{});
        poison(out);
        return 1;
    }
};

// Counts the blocks run (emu_shared_fresh tells a new block by it).
inline unsigned long long& blocks_run() {
    static unsigned long long count = 0;
    return count;
}

// Runs `body` as `threads` fibers of block `idx` of a grid of `grid` blocks; false (after
// printing why) on a deadlock.
inline bool run_block(unsigned int idx, unsigned int grid, unsigned int threads, std::function<void()> body) {
    ++blocks_run();
    Block b;
    b.threads = threads;
    b.block_idx = emu_dim3{idx, 0, 0};
    b.grid_dim = emu_dim3{grid, 1, 1};
    b.fibers.resize(threads);
    b.arrived.assign(1 + (threads + 31) / 32 + kNamedBarriers, 0);
    b.generation.assign(1 + (threads + 31) / 32 + kNamedBarriers, 0);
    b.meets.assign(1 + (threads + 31) / 32 + kNamedBarriers, Meet::Barrier);
    b.slots.assign(threads, 0);
    b.lanes.assign(2 * threads, 0);
    b.body = std::move(body);
    block() = &b;
    for (unsigned int t = 0; t < threads; ++t) {
        Fiber& f = b.fibers[t];
        f.tid = t;
        f.barrier = -1;
        f.done = false;
        f.yielded = false;
        f.preempted = false;
        f.collectives = 0;
        start(f.ctx, fiber_stack(t), kStack, fiber_entry);
    }
    // Eager order resumes the first runnable fiber after every switch. No fiber below `from` is
    // runnable (each is done, waits at a barrier not yet released, or spun with nothing changed
    // since), so the scan starts there: a release or a spinner's chance moves it back down.
    unsigned int from = 0;
    while (b.finished < threads) {
        bool progressed = false;
        for (unsigned int k = eager_order() ? from : 0; k < threads; ++k) {
            Fiber& f = b.fibers[reverse_order() ? threads - 1 - k : k];
            const bool waiting = f.barrier >= 0 && b.generation[f.barrier] == f.generation;
            // A fiber spinning on an mbarrier waits until another fiber has moved on.
            if (f.done || waiting || (f.yielded && f.yield_epoch == b.epoch)) {
                if (k == from) ++from;
                continue;
            }
            if (f.preempted) continue;  // the others first (still runnable: `from` stays)
            f.yielded = false;
            f.barrier = -1;
            b.current = &f;
            const unsigned long long before = b.epoch;
            switch_to(b.scheduler, f.ctx);
            if (!f.yielded) ++b.epoch;
            if (b.epoch != before) {
                progressed = true;
                if (b.released_low < from) from = b.released_low;
                if (b.spun_low < from) from = b.spun_low;
                b.released_low = ~0u;
            }
            if (eager_order() && progressed) break;
        }
        if (b.finished == threads) break;
        if (!progressed) {  // no other fiber can run: the preempted ones, if any, go on
            bool any = false;
            for (Fiber& f : b.fibers) any |= std::exchange(f.preempted, false);
            if (any) continue;
        }
        if (!progressed) {
            std::fprintf(stderr,
                         "emu: deadlock in block %u: threads wait at a barrier that others never reach, or on "
                         "an mbarrier that never completes\n",
                         idx);
            for (const Fiber& f : b.fibers)
                if (!f.done)
                    std::fprintf(stderr, "emu:   thread %u: %s\n", f.tid,
                                 f.barrier == 0   ? "at the block's barrier"
                                 : f.barrier > 0  ? "at a warp or named barrier"
                                 : f.yielded      ? "waiting on an mbarrier"
                                                  : "runnable");
            block() = nullptr;
            return false;
        }
    }
    block() = nullptr;
    return true;
}

// A launch of a chain (chains_main): its outputs (M values), blocks, and threads per block.
struct ChainLaunch {
    unsigned long long outputs, blocks;
    unsigned int threads;
};

// The host side of the emulated reductions that run as a chain of launches (the axes families'
// mains): reads cases from argv[1], each
//   u64 n, shift, grid, launches; launches * RECORD u64 records; n In items (read_items);
// runs the launches in order, each on min(grid, its blocks) blocks, block by block
// (`shape(record)` gives its ChainLaunch; each block runs `launch(record, items, values, out)`,
// values the launch before's outputs), and appends to argv[2] per case
//   u64 ok (1, or 0 after a deadlock); the last launch's outputs, Out values.
// Every launch writes a buffer of exactly its outputs: AddressSanitizer reports any access past
// them.
template <typename In, typename Out, int RECORD, typename Shape, typename Launch>
int chains_main(int argc, char** argv, Shape shape, Launch launch) {
    std::FILE *in, *res;
    if (!open_files(argc, argv, &in, &res)) return 2;
    unsigned long long h[4];
    while (std::fread(h, 8, 4, in) == 4) {
        const unsigned long long n = h[0], shift = h[1], grid = h[2], launches = h[3];
        std::vector<unsigned long long> a(launches * RECORD);
        if (std::fread(a.data(), 8, a.size(), in) != a.size()) return 3;
        std::vector<unsigned char> storage;
        In* items;
        if (!read_items(in, n, shift, storage, items)) return 3;
        std::vector<unsigned char> from, to;
        unsigned long long ok = 1;
        for (unsigned long long l = 0; l < launches && ok; ++l) {
            const unsigned long long* r = &a[l * RECORD];
            const ChainLaunch c = shape(r);
            to.assign(c.outputs * sizeof(Out), 0xA5);
            Out* out = reinterpret_cast<Out*>(to.data());
            const Out* values = reinterpret_cast<const Out*>(from.data());
            const unsigned int g = (unsigned int)(c.blocks < grid ? (c.blocks > 0 ? c.blocks : 1) : grid);
            for (unsigned int b = 0; b < g && ok; ++b)
                ok = run_block(b, g, c.threads, [&] { launch(r, items, values, out); });
            from.swap(to);
        }
        std::fwrite(&ok, 8, 1, res);
        std::fwrite(from.data(), 1, from.size(), res);
    }
    std::fclose(res);
    return 0;
}

inline int named_sync_or(unsigned int id, unsigned int count, int p) {
    Block& b = *block();
    b.slots[self().tid] = p != 0;
    named_sync(id, count);
    int any = 0;
    for (unsigned int t = 0; t < count; ++t) any |= b.slots[t] != 0;  // the first `count` threads
    named_sync(id, count);
    return any;
}

// mbarriers and bulk copies (kernels/pipe.cuh). A barrier's phase completes when its expected
// arrivals have come and the bytes announced with them have landed. A bulk copy poisons its
// destination when issued (0xCD) and lands only when a thread waits on its barrier after every
// arrival: a thread that reads a stage before waiting for it reads the poison.
struct BulkCopy {
    void* dst;
    const void* src;
    unsigned int bytes;
    unsigned int thread = ~0u;  // the thread of a cp.async (bulk copies: none)
};
struct Mbar {
    unsigned int count = 0, pending = 0;
    long long tx = 0;
    unsigned long long phase = 0;  // phases completed
    std::vector<BulkCopy> copies;
};
inline std::vector<std::pair<unsigned long long*, Mbar>>& mbars() {
    static std::vector<std::pair<unsigned long long*, Mbar>> bars;
    return bars;
}
inline Mbar& mbar(unsigned long long* bar) {
    std::vector<std::pair<unsigned long long*, Mbar>>& bars = mbars();
    for (auto& e : bars)
        if (e.first == bar) return e.second;
    bars.emplace_back(bar, Mbar{});
    return bars.back().second;
}
inline void mbar_init(unsigned long long* bar, unsigned int count) {
    Mbar& m = mbar(bar);
    m = Mbar{};
    m.count = m.pending = count;
}
// Whether the phase completed now.
inline bool mbar_complete_if_done(Mbar& m) {
    if (m.pending == 0 && m.tx == 0 && m.copies.empty()) {
        ++m.phase;
        m.pending = m.count;
        ++block()->epoch;
        return true;
    }
    return false;
}
inline void mbar_arrive(unsigned long long* bar, unsigned int bytes) {
    Mbar& m = mbar(bar);
    if (m.pending == 0) {
        std::fprintf(stderr, "emu: more arrivals on an mbarrier than it expects\n");
        std::abort();
    }
    m.tx += bytes;
    --m.pending;
    ++block()->epoch;  // a spinning fiber may now pass
    // The arrival that completes a phase releases its waiters (a stage released to its
    // producer): they go first, so that a read of the stage after its release meets the
    // refill's poison.
    if (mbar_complete_if_done(m)) preempt();
}
inline void bulk_copy(void* dst, const void* src, unsigned int bytes, unsigned long long* bar) {
    if ((reinterpret_cast<std::uintptr_t>(dst) | reinterpret_cast<std::uintptr_t>(src) | bytes) % 16 != 0) {
        std::fprintf(stderr, "emu: a bulk copy that is not 16-byte aligned\n");
        std::abort();
    }
    std::memset(dst, 0xCD, bytes);
    mbar(bar).copies.push_back(BulkCopy{dst, src, bytes});
}
// Waits until the phase of parity `parity` has completed.
inline void mbar_wait(unsigned long long* bar, unsigned int parity) {
    for (unsigned long long spins = 0;; ++spins) {
        Mbar& m = mbar(bar);
        if (m.pending == 0) {
            for (const BulkCopy& c : m.copies) {
                std::memcpy(c.dst, c.src, c.bytes);
                m.tx -= c.bytes;
            }
            m.copies.clear();
            // Bytes announced and not yet copied: the copies are still to be issued (the
            // producer announces them first), and the phase waits for them.
            if (m.tx < 0) {
                std::fprintf(stderr, "emu: an mbarrier's copies exceed its announced bytes (%lld)\n", -m.tx);
                std::abort();
            }
            mbar_complete_if_done(m);
        }
        // As try_wait.parity: done when the phase in progress has the other parity.
        if ((m.phase & 1u) != parity) return;
        if (spins > (1u << 24)) {
            std::fprintf(stderr,
                         "emu: deadlock: thread %u of block %u waits on an mbarrier that never completes "
                         "(parity %u, phases done %llu, arrivals pending %u of %u)\n",
                         self().tid, block()->block_idx.x, parity, m.phase, m.pending, m.count);
            std::abort();
        }
        yield();
    }
}

}  // namespace emu

#define threadIdx (emu_dim3{emu::self().tid, 0, 0})
#define blockIdx (emu::block()->block_idx)
#define blockDim (emu_dim3{emu::block()->threads, 1, 1})
#define gridDim (emu::block()->grid_dim)

inline void __syncthreads() { emu::block_sync(); }
inline int __syncthreads_or(int p) {
    emu::Block& b = *emu::block();
    b.slots[emu::self().tid] = p != 0;
    emu::block_sync();
    int any = 0;
    for (unsigned int t = 0; t < b.threads; ++t) any |= b.slots[t] != 0;
    emu::block_sync();
    return any;
}
inline void __syncwarp(unsigned int = 0xffffffffu) { emu::warp_sync(); }
template <class T>
inline T __shfl_sync(unsigned int, T v, int src, int = 32) { return emu::warp_exchange(v, src & 31); }
template <class T>
inline T __shfl_up_sync(unsigned int, T v, unsigned int d, int = 32) {
    return emu::warp_exchange(v, (int)emu::lane() - (int)d);
}
template <class T>
inline T __shfl_down_sync(unsigned int, T v, unsigned int d, int = 32) {
    return emu::warp_exchange(v, (int)(emu::lane() + d));
}
template <class T>
inline T __shfl_xor_sync(unsigned int, T v, int m, int = 32) {
    return emu::warp_exchange(v, (int)(emu::lane() ^ (unsigned int)m));
}
inline unsigned int __ballot_sync(unsigned int, int p) {
    const unsigned long long* slots = emu::warp_collective(p != 0, emu::Meet::Vote);
    unsigned int bits = 0;
    for (unsigned int l = 0; l < 32; ++l) bits |= (slots[l] ? 1u : 0u) << l;
    return bits;
}
inline int __any_sync(unsigned int mask, int p) { return __ballot_sync(mask, p) != 0; }
inline int __all_sync(unsigned int mask, int p) { return __ballot_sync(mask, p) == 0xffffffffu; }
// The warp's minimum / maximum / sum (sm_80's redux.sync), over all 32 lanes.
template <class Pick>
inline unsigned int emu_warp_redux(unsigned int v, unsigned int init, Pick pick) {
    const unsigned long long* slots = emu::warp_collective(v, emu::Meet::Reduce);
    unsigned int r = init;
    for (unsigned int l = 0; l < 32; ++l) r = pick(r, emu::from_slot<unsigned int>(slots[l]));
    return r;
}
inline unsigned int __reduce_min_sync(unsigned int, unsigned int v) {
    return emu_warp_redux(v, ~0u, [](unsigned int x, unsigned int y) { return x < y ? x : y; });
}
inline unsigned int __reduce_max_sync(unsigned int, unsigned int v) {
    return emu_warp_redux(v, 0u, [](unsigned int x, unsigned int y) { return x > y ? x : y; });
}
inline unsigned int __reduce_add_sync(unsigned int, unsigned int v) {
    return emu_warp_redux(v, 0u, [](unsigned int x, unsigned int y) { return x + y; });
}
inline unsigned int __reduce_or_sync(unsigned int, unsigned int v) {
    return emu_warp_redux(v, 0u, [](unsigned int x, unsigned int y) { return x | y; });
}

// One OS thread runs every fiber: atomics are plain read-modify-writes.
template <class T>
inline T atomicAdd(T* p, T v) { T old = *p; *p = old + v; return old; }
template <class T>
inline T atomicMin(T* p, T v) { T old = *p; if (v < old) *p = v; return old; }
template <class T>
inline T atomicMax(T* p, T v) { T old = *p; if (v > old) *p = v; return old; }
template <class T>
inline T atomicOr(T* p, T v) { T old = *p; *p = old | v; return old; }
template <class T>
inline T atomicExch(T* p, T v) { T old = *p; *p = v; return old; }
template <class T>
inline T atomicCAS(T* p, T compare, T value) { T old = *p; if (old == compare) *p = value; return old; }
inline void __threadfence() {}
// The cache-hinted loads and stores fault on the GPU at an address not aligned to the type
// (a 16-byte vector off its boundary): here they stop the emulator with the same complaint.
template <class T>
inline const T* emu_aligned(const T* p) {
    if (reinterpret_cast<std::uintptr_t>(p) % alignof(T) != 0) {
        std::fprintf(stderr, "emu: misaligned address: %zu-byte access at %p\n", sizeof(T), (const void*)p);
        std::abort();
    }
    return p;
}
template <class T>
inline T __ldg(const T* p) { return *emu_aligned(p); }
template <class T>
inline T __ldcg(const T* p) { return *emu_aligned(p); }
template <class T>
inline T __ldcs(const T* p) { return *emu_aligned(p); }
template <class T>
inline void __stcs(T* p, T v) { *const_cast<T*>(emu_aligned(p)) = v; }
// A wait (kernels/scan.cu's look-back) can only be for another block, which in the emulator
// either ran before or never runs while this one waits: a deadlock.
inline void __nanosleep(unsigned int) {
    std::fprintf(stderr, "emu: deadlock: thread %u of block %u waits for another block\n", emu::self().tid,
                 emu::block()->block_idx.x);
    std::abort();
}
inline unsigned int __funnelshift_r(unsigned int lo, unsigned int hi, unsigned int shift) {
    return (unsigned int)((((unsigned long long)hi << 32) | lo) >> (shift & 31));
}
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned int)x); }
inline int __popc(unsigned int x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
template <class A, class B>
inline typename std::common_type<A, B>::type min(A a, B b) { return b < a ? b : a; }
template <class A, class B>
inline typename std::common_type<A, B>::type max(A a, B b) { return a < b ? b : a; }
inline float __int_as_float(int x) { float f; std::memcpy(&f, &x, 4); return f; }
inline double __longlong_as_double(long long x) { double d; std::memcpy(&d, &x, 8); return d; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline double __ddiv_rn(double a, double b) { return a / b; }

// Called by every fiber after a static __shared__ declaration (`bytes` at `p`): the first call
// of each block fills the variable with 0xA5, as dynamic shared memory is filled before every
// block.
inline void emu_shared_fresh(void* p, std::size_t bytes) {
    struct Seen {
        void* p;
        unsigned long long block;
    };
    static std::vector<Seen> seen;
    const unsigned long long block = emu::blocks_run();
    for (Seen& s : seen) {
        if (s.p == p) {
            if (s.block != block) {
                s.block = block;
                emu::poison(p, bytes);
            }
            return;
        }
    }
    seen.push_back(Seen{p, block});
    emu::poison(p, bytes);
}

// The dynamic shared memory of the running block (`extern __shared__ T name[];` in a kernel is
// rewritten to point here): exactly `bytes`, a new allocation each time it is sized, filled with
// 0xA5, so that AddressSanitizer reports an access past the size the main gave.
inline std::size_t& emu_dynamic_smem_size() {
    static std::size_t size = 0;
    return size;
}
inline unsigned char* emu_dynamic_smem(std::size_t bytes = 0) {
    static std::unique_ptr<unsigned char[]> smem;
    if (bytes) {
        smem.reset(new unsigned char[bytes]);
        std::memset(smem.get(), 0xA5, bytes);
        emu_dynamic_smem_size() = bytes;
    }
    return smem.get();
}

namespace emu {
// cp.async (kernels/seg_merge.cu). A shared address (what __cvta_generic_to_shared gives) is an
// offset into the block's dynamic shared memory, where the copies' rings lie. A copy poisons its
// destination when issued (0xCD) and is the issuing thread's until its next
// cp.async.mbarrier.arrive, which hands its copies to that barrier's phase: they land as a bulk
// copy's do, when a thread waits on the barrier after every arrival. So a read of a ring's chunk
// before its barrier's wait reads the poison, and a copy no arrival covers never lands.
inline unsigned int smem_offset(const void* p) {
    const unsigned char* base = emu_dynamic_smem();
    const unsigned char* q = static_cast<const unsigned char*>(p);
    if (q < base || q > base + emu_dynamic_smem_size()) {
        std::fprintf(stderr, "emu: a shared address outside the dynamic shared memory\n");
        std::abort();
    }
    return (unsigned int)(q - base);
}
// The copies each thread issued since its last arrival, by thread.
inline std::vector<std::vector<BulkCopy>>& async_pending_all() {
    static std::vector<std::vector<BulkCopy>> pending;
    return pending;
}
inline std::vector<BulkCopy>& async_pending() {
    std::vector<std::vector<BulkCopy>>& all = async_pending_all();
    const unsigned int t = self().tid;
    if (all.size() <= t) all.resize(t + 1);
    return all[t];
}
inline void cp_async(unsigned int dst, const void* src, unsigned int bytes) {
    unsigned char* d = emu_dynamic_smem() + dst;
    if ((std::size_t)dst + bytes > emu_dynamic_smem_size() ||
        (reinterpret_cast<std::uintptr_t>(d) | reinterpret_cast<std::uintptr_t>(src)) % bytes != 0) {
        std::fprintf(stderr, "emu: a cp.async of %u bytes out of the shared memory or misaligned\n", bytes);
        std::abort();
    }
    std::memset(d, 0xCD, bytes);
    async_pending().push_back(BulkCopy{d, src, bytes, self().tid});
}
inline void cp_async_arrive(unsigned long long* bar) {
    std::vector<BulkCopy>& mine = async_pending();
    Mbar& m = mbar(bar);
    unsigned int bytes = 0;
    for (const BulkCopy& c : mine) {
        m.copies.push_back(c);
        bytes += c.bytes;
    }
    mine.clear();
    mbar_arrive(bar, bytes);
}
// cp.async.wait_all: every copy the thread issued lands now, those its arrivals handed to a
// barrier too (the barrier then waits for no bytes of them).
inline void cp_async_wait_all() {
    std::vector<BulkCopy>& mine = async_pending();
    for (const BulkCopy& c : mine) std::memcpy(c.dst, c.src, c.bytes);
    mine.clear();
    for (auto& e : mbars()) {
        Mbar& m = e.second;
        const std::size_t held = m.copies.size();
        std::vector<BulkCopy> kept;
        for (const BulkCopy& c : m.copies) {
            if (c.thread != self().tid) {
                kept.push_back(c);
                continue;
            }
            std::memcpy(c.dst, c.src, c.bytes);
            m.tx -= c.bytes;
        }
        m.copies.swap(kept);
        if (m.copies.size() < held) mbar_complete_if_done(m);
    }
}
// After a block: whether every cp.async landed before it ended (by its barrier's wait or a
// wait_all): copies still issued, or still held by a barrier, would write shared memory the block
// no longer owns on a GPU. Such copies are reported and dropped.
inline bool async_copies_settled() {
    bool settled = true;
    std::vector<std::vector<BulkCopy>>& all = async_pending_all();
    for (std::size_t t = 0; t < all.size(); ++t) {
        if (!all[t].empty()) {
            std::fprintf(stderr, "emu: thread %zu issued cp.async copies that no arrival covers\n", t);
            all[t].clear();
            settled = false;
        }
    }
    for (auto& e : mbars()) {
        std::vector<BulkCopy>& copies = e.second.copies;
        for (const BulkCopy& c : copies) {
            if (c.thread != ~0u) {
                std::fprintf(stderr, "emu: thread %u's cp.async copies were in flight when its block ended\n",
                             c.thread);
                settled = false;
            }
        }
        copies.erase(std::remove_if(copies.begin(), copies.end(), [](const BulkCopy& c) { return c.thread != ~0u; }),
                     copies.end());
    }
    return settled;
}
}  // namespace emu

#endif  // REDUCE_CUDA_EMU_HPP
