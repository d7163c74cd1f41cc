register_cpu_ci(1, 'stage-b-\N{LATIN SMALL LETTER C}pu')
register_cpu_ci(2, 'stage-b-\N{latin small letter c}pu', disabled='\N{CJK UNIFIED IDEOGRAPH-4E00} \N{HANGUL SYLLABLE GAG}')
