; Lemmas that sort the pairs the size-3 job leaves unknown (docs/rules.md,
; "Verification"): `taso_verifier prove unknown.sexpr --extra THIS_FILE`
; names them extra0..extra11 in the order below. They are NOT axioms: 0-2
; are true but the validator cannot check them (its relu is uninterpreted);
; 3-11 hold only on shapes the signatures do not record: validate refutes
; them, or (3, 4, 6) one side exists where the other cannot.
; extra0-2: relu of a non-negative constant.
(assert (forall ((a Int) (b Int) (kh Int) (kw Int)) (= (relu (const_iconv a b kh kw)) (const_iconv a b kh kw))))
(assert (forall ((c Int) (d2 Int) (d3 Int)) (= (relu (const_pool c 1 d2 d3)) (const_pool c 1 d2 d3))))
(assert (forall ((s T) (c Int) (d2 Int) (d3 Int)) (= (relu (smul (const_pool c 1 d2 d3) s)) (smul (const_pool c 1 d2 d3) (relu s)))))
; extra3-6: R(w) = conv(Ci, w) rotates w and swaps its channel axes; R(R(w)) is
; enlarge(w), or w itself only when w already has Ci's kernel size.
(assert (forall ((w T) (c Int) (kh Int) (kw Int)) (= (conv2d 1 1 0 0 1 (const_iconv c c kh kw) (conv2d 1 1 0 0 1 (const_iconv c c kh kw) w)) (enlarge kh kw w))))
(assert (forall ((w T) (c Int) (kh Int) (kw Int)) (= (ewmul (const_iconv c c kh kw) (conv2d 1 1 0 0 1 (const_iconv c c kh kw) w)) (ewmul (const_iconv c c kh kw) (enlarge kh kw w)))))
(assert (forall ((w T) (c Int) (kh Int) (kw Int)) (= (conv2d 1 1 0 0 1 (const_iconv c c kh kw) (conv2d 1 1 0 0 1 (const_iconv c c kh kw) w)) w)))
(assert (forall ((w T) (c Int) (kh Int) (kw Int)) (= (ewmul (const_iconv c c kh kw) (conv2d 1 1 0 0 1 (const_iconv c c kh kw) w)) (ewmul (const_iconv c c kh kw) w))))
; extra7-8: average pooling commutes with a convolution, true only when the
; convolution is pointwise (here: a 1-high kernel over 1-wide data).
(assert (forall ((x T) (w T) (kh Int) (kw Int) (inc Int)) (= (pool_avg kh kw 1 1 0 inc (conv2d 1 1 0 0 1 x w)) (conv2d 1 1 0 0 1 (pool_avg kh kw 1 1 0 inc x) w))))
(assert (forall ((x T) (w T) (kh Int) (kw Int) (inc Int) (g Int)) (= (pool_avg kh kw 1 1 0 inc (conv2d 1 1 0 0 g x w)) (conv2d 1 1 0 0 g (pool_avg kh kw 1 1 0 inc x) w))))
; extra9-11: pools commute with R, true only for w of Ci's kernel size.
(assert (forall ((w T) (c Int) (kh Int) (kw Int) (g Int) (inc Int)) (= (pool_avg kh kw 1 1 0 inc (conv2d 1 1 0 0 g (const_iconv c c kh kw) w)) (conv2d 1 1 0 0 g (const_iconv c c kh kw) (pool_avg kh kw 1 1 0 inc w)))))
(assert (forall ((w T) (c Int) (kh Int) (kw Int) (g Int)) (= (pool_max kh kw 1 1 0 (conv2d 1 1 0 0 g (const_iconv c c kh kw) w)) (conv2d 1 1 0 0 g (const_iconv c c kh kw) (pool_max kh kw 1 1 0 w)))))
(assert (forall ((w T) (c Int) (kh Int) (kw Int) (g Int) (inc Int)) (= (conv2d 1 1 0 0 g (pool_avg kh kw 1 1 0 inc (const_iconv c c kh kw)) w) (conv2d 1 1 0 0 g (const_iconv c c kh kw) (pool_avg kh kw 1 1 0 inc w)))))
