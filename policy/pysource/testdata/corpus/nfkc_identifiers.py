ｒegister_cpu_ci(1, 'stage-b-cpu')
register_cpu_ci(est_ｔime=2, suite='stage-b-cpu')
Ｔｒｕｅ = 1
register_cpu_ci(3, 'stage-b-cpu', nightly=Ｔｒｕｅ)
