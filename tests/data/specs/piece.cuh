    // block staging with {{BLOCK}} threads
    __shared__ {{ctype(T)}} local;
    if (threadIdx.x == 0) local = 0;
    __syncthreads();
    if (in[i] < thresh) atomicAdd(&local, ({{ctype(T)}})1);
    __syncthreads();
    if (threadIdx.x == 0 && local) atomicAdd(out, local);
