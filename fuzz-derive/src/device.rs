//! The GPU side: each batch of programs is one NVRTC translation unit (programs in their own
//! namespaces, one kernel each), compiled with the runtime's options (`--fmad=false`); a kernel
//! computes `m_combine(a[t], b[t])` per thread and `m_identity()` in the last slot, and records
//! a per-thread fault flag through the prelude's `R_ON_FAULT` hook.

use crate::{Program, Run};
use cudarc::driver::{CudaContext, CudaStream, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::Ptx;
use reduce_cuda::testing::compile_cubin;
use reduce_cuda::KernelSource;
use std::sync::Arc;

/// The most inputs per program (fault flags live in a fixed device array).
pub const MAX_INPUTS: usize = 4096;

fn head() -> String {
    format!(
        "// fuzz-derive batch (device)\n\
         __device__ unsigned int r_fuzz_faults[{}];\n\
         #define R_ON_FAULT(kind, i, n) (r_fuzz_faults[blockIdx.x * blockDim.x + threadIdx.x] = 1u)\n",
        MAX_INPUTS + 1
    )
}

fn entry(name: &str) -> String {
    format!(
        "extern \"C\" __global__ void fuzz_{name}(const {name}::M* a, const {name}::M* b, \
         {name}::M* out, unsigned int n) {{\n    \
         const unsigned int t = blockIdx.x * blockDim.x + threadIdx.x;\n    \
         if (t < n) out[t] = {name}::m_combine(a[t], b[t]);\n    \
         else if (t == n) out[t] = {name}::m_identity();\n}}\n"
    )
}

/// The translation unit of a batch.
pub fn source(programs: &[&Program]) -> KernelSource {
    let text = crate::batch_text(programs, &head(), entry);
    KernelSource {
        family: "fuzz".into(),
        sections: vec![(1, "fuzz batch".into())],
        text,
    }
}

/// Compiles each batch with NVRTC for `arch`, `threads` batches at a time.
pub fn compile_all(
    batches: &[Vec<&Program>],
    arch: &str,
    threads: usize,
) -> Result<Vec<Vec<u8>>, String> {
    let mut out: Vec<Option<Result<Vec<u8>, String>>> = (0..batches.len()).map(|_| None).collect();
    for (chunk_out, chunk) in out
        .chunks_mut(threads.max(1))
        .zip(batches.chunks(threads.max(1)))
    {
        std::thread::scope(|scope| {
            for (slot, batch) in chunk_out.iter_mut().zip(chunk) {
                scope.spawn(move || {
                    *slot = Some(compile_cubin(&source(batch), arch).map_err(|e| e.to_string()));
                });
            }
        });
    }
    out.into_iter().map(|r| r.expect("compiled")).collect()
}

/// One GPU.
pub struct Device {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    /// `sm_90` on an H100.
    pub arch: String,
    /// The device's name.
    pub name: String,
}

impl Device {
    /// GPU 0, or why there is none.
    pub fn new() -> Result<Device, String> {
        if !reduce_cuda::driver_available() {
            return Err("the CUDA driver library was not found".into());
        }
        let gpu = reduce_cuda::Gpu::new(0).map_err(|e| e.to_string())?;
        let arch = gpu.info().arch();
        let name = gpu.info().name.clone();
        drop(gpu);
        let ctx = CudaContext::new(0).map_err(|e| e.to_string())?;
        let stream = ctx.new_stream().map_err(|e| e.to_string())?;
        Ok(Device {
            ctx,
            stream,
            arch,
            name,
        })
    }

    /// Runs a compiled batch: per program, the `n + 1` values (identity last) and fault flags.
    pub fn run(
        &self,
        cubin: Vec<u8>,
        programs: &[&Program],
        data: &[(Vec<u8>, Vec<u8>)],
    ) -> Result<Vec<Run>, String> {
        let err = |e: cudarc::driver::DriverError| e.to_string();
        let module = self.ctx.load_module(Ptx::from_binary(cubin)).map_err(err)?;
        // A batch whose programs never check an index may have dropped the global.
        let mut faults_global = module.get_global("r_fuzz_faults", &self.stream).ok();
        let mut out = Vec::new();
        for (p, (a, b)) in programs.iter().zip(data) {
            let n = a.len() / p.size;
            assert!(n <= MAX_INPUTS, "at most {MAX_INPUTS} inputs per program");
            let f = module
                .load_function(&format!("fuzz_{}", p.name))
                .map_err(err)?;
            let da = self.stream.clone_htod(a).map_err(err)?;
            let db = self.stream.clone_htod(b).map_err(err)?;
            let mut dout = self
                .stream
                .alloc_zeros::<u8>((n + 1) * p.size)
                .map_err(err)?;
            if let Some(g) = faults_global.as_mut() {
                self.stream.memset_zeros(g).map_err(err)?;
            }
            let n32 = n as u32;
            let cfg = LaunchConfig {
                grid_dim: ((n as u32 + 1).div_ceil(128), 1, 1),
                block_dim: (128, 1, 1),
                shared_mem_bytes: 0,
            };
            let mut launch = self.stream.launch_builder(&f);
            launch.arg(&da).arg(&db).arg(&mut dout).arg(&n32);
            // SAFETY: the kernel reads n values of the program's M from a and b and writes n + 1
            // to out (sizes as allocated); M has the layout of the Rust struct (static_asserts).
            unsafe { launch.launch(cfg) }.map_err(err)?;
            let values = self.stream.clone_dtoh(&dout).map_err(err)?;
            let faults: Vec<u8> = match &faults_global {
                Some(g) => self
                    .stream
                    .clone_dtoh(g)
                    .map_err(err)?
                    .chunks(4)
                    .take(n + 1)
                    .map(|w| u8::from(w.iter().any(|&x| x != 0)))
                    .collect(),
                None => vec![0; n + 1],
            };
            out.push(Run { values, faults });
        }
        self.stream.synchronize().map_err(err)?;
        Ok(out)
    }
}
